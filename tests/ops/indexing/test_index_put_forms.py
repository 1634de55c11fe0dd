"""index_put / masked_scatter / put as C++ ops (csrc/ops/indexing_scatter.cpp) bound once with
their methods and in-place forms (csrc/python/bind_index_forms.cpp): values against PyTorch with
repeated, negative and out-of-range indices, empty and non-contiguous operands, float64
gradients, and the errors (class and op name)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, compare_grads

X = np.arange(12, dtype=np.float64).reshape(3, 4)
I0, I1 = np.array([0, 2, 0, -1]), np.array([1, 3, 1, 0])  # (0, 1) twice; -1 is row 2
V = np.array([10.0, 20.0, 30.0, 40.0])


@pytest.mark.parametrize("name", ["index_put", "masked_scatter", "put"])
def test_one_function_each(name):
    assert getattr(ts.Tensor, name) is getattr(ts, name)
    assert list(inspect.signature(getattr(ts, name)).parameters)[0] == "input"


def _pos(i):  # torch's index_put takes negative indices too; put as well
    return torch.from_numpy(i)


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_index_put_matches_torch(accumulate, dtype):
    x, v = X.astype(dtype), V.astype(dtype)
    i0, i1 = (I0, I1) if accumulate else (I0[1:], I1[1:])  # no duplicates: last-wins is unordered
    got = ts.asarray(x).index_put((ts.asarray(i0), ts.asarray(i1)), ts.asarray(v[: len(i0)]),
                                  accumulate=accumulate)
    want = torch.from_numpy(x).index_put((_pos(i0), _pos(i1)), torch.from_numpy(v[: len(i0)]),
                                         accumulate=accumulate)
    assert_same(got, want)


def test_index_put_broadcast_none_slice_inplace_and_empty():
    want = torch.from_numpy(X).index_put((torch.tensor([0, 0]),), torch.tensor(1.5, dtype=torch.float64),
                                         accumulate=True)
    assert_same(ts.asarray(X).index_put((ts.asarray([0, 0]),), ts.asarray(1.5, dtype=ts.float64),
                                        accumulate=True), want)
    # a non-contiguous input and a bool mask index
    xt = ts.asarray(X).T
    m = np.array([True, False, True, True])
    assert_same(xt.index_put((ts.asarray(m),), ts.asarray(-1.0, dtype=ts.float64), True),
                torch.from_numpy(X).T.index_put((torch.from_numpy(m),),
                                                torch.tensor(-1.0, dtype=torch.float64), True))
    x = ts.asarray(X.copy())
    assert x.index_put_((ts.asarray(I0), ts.asarray(I1)), ts.asarray(V), accumulate=True) is x
    assert_same(x, torch.from_numpy(X.copy()).index_put_((_pos(I0), _pos(I1)),
                                                         torch.from_numpy(V), accumulate=True))
    e = ts.asarray(X).index_put((ts.zeros(0, dtype=ts.int64),), ts.zeros((0, 4), dtype=ts.float64),
                                accumulate=True)
    assert_same(e, torch.from_numpy(X))


def test_index_put_gradients_match_torch():
    for acc in (False, True):
        i0, i1 = (I0, I1) if acc else (I0[1:], I1[1:])
        n = len(i0)
        compare_grads(
            lambda a, b: a.index_put((ts.asarray(i0), ts.asarray(i1)), b[:n], accumulate=acc),
            lambda a, b: a.index_put((_pos(i0), _pos(i1)), b[:n], accumulate=acc), [X, V])


def test_masked_scatter_matches_torch():
    m = np.array([[True, False, True, False], [False, False, True, True], [True, True, True, True]])
    src = np.arange(100.0, 112.0)
    assert_same(ts.asarray(X).masked_scatter(ts.asarray(m), ts.asarray(src)),
                torch.from_numpy(X).masked_scatter(torch.from_numpy(m), torch.from_numpy(src)))
    row = np.array([True, False, False, True])  # broadcast over the rows
    assert_same(ts.masked_scatter(ts.asarray(X).T.T, ts.asarray(row), ts.asarray(src).reshape(3, 4)),
                torch.masked_scatter(torch.from_numpy(X), torch.from_numpy(row),
                                     torch.from_numpy(src).reshape(3, 4)))
    assert_same(ts.zeros((0, 2)).masked_scatter(ts.zeros((0, 2), dtype=ts.bool), ts.zeros(0)),
                torch.zeros(0, 2).masked_scatter(torch.zeros(0, 2, dtype=torch.bool), torch.zeros(0)))
    x = ts.asarray(X.copy())
    assert x.masked_scatter_(ts.asarray(m), ts.asarray(src)) is x
    compare_grads(lambda a, b: a.masked_scatter(ts.asarray(m), b),
                  lambda a, b: a.masked_scatter(torch.from_numpy(m), b), [X, src])


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_matches_torch(accumulate):
    idx = np.array([[0, -1], [5, 0]]) if accumulate else np.array([[0, -1], [5, 7]])
    src = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = ts.asarray(X).put(ts.asarray(idx), ts.asarray(src), accumulate=accumulate)
    want = torch.from_numpy(X).put(torch.from_numpy(idx), torch.from_numpy(src),
                                   accumulate=accumulate)
    assert_same(got, want)
    x = ts.asarray(X.copy()).T  # non-contiguous, put_ in place
    t = torch.from_numpy(X.copy()).T
    assert x.put_(ts.asarray(idx), ts.asarray(src), accumulate) is x
    assert_same(x, t.put_(torch.from_numpy(idx), torch.from_numpy(src), accumulate))
    compare_grads(lambda a, b: a.put(ts.asarray(idx), b, accumulate=accumulate),
                  lambda a, b: a.put(torch.from_numpy(idx), b, accumulate=accumulate), [X, src])


def test_errors_name_the_op():
    x = ts.asarray(X)
    with pytest.raises(IndexError, match="index_put: index 5 is out of bounds"):
        x.index_put((ts.asarray([5]),), ts.asarray(1.0, dtype=ts.float64), accumulate=True)
    with pytest.raises(IndexError, match="index_put"):
        x.index_put((ts.asarray([-4]),), ts.asarray(1.0, dtype=ts.float64))
    with pytest.raises(RuntimeError, match="index_put: values \\(float32\\) must have the same dtype"):
        x.index_put((ts.asarray([0]),), ts.asarray([1.0]))
    with pytest.raises(TypeError, match="index_put: indices must be a tuple"):
        x.index_put(ts.asarray([0]), ts.asarray(1.0, dtype=ts.float64))
    with pytest.raises(IndexError, match="put: index 12 is out of bounds"):
        x.put(ts.asarray([12]), ts.asarray([1.0], dtype=ts.float64))
    with pytest.raises(RuntimeError, match="put: expected source and index to have the same"):
        x.put(ts.asarray([0, 1]), ts.asarray([1.0], dtype=ts.float64))
    with pytest.raises(IndexError, match="put: cannot put into an empty tensor"):
        ts.zeros(0).put(ts.asarray([0]), ts.asarray([1.0]))
    with pytest.raises(RuntimeError, match="masked_scatter: expected mask to have dtype bool"):
        x.masked_scatter(ts.ones((3, 4)), x)
    with pytest.raises(RuntimeError, match="masked_scatter: number of elements in source"):
        x.masked_scatter(ts.ones((3, 4), dtype=ts.bool), ts.zeros(3, dtype=ts.float64))
    with pytest.raises(RuntimeError, match="masked_scatter: source \\(float32\\)"):
        x.masked_scatter(ts.ones((3, 4), dtype=ts.bool), ts.zeros(12))


# ---- take: the standard's take(x, indices, /, *, axis=None) and torch.take(input, index)
def test_take_forms_match_torch_and_numpy():
    assert ts.Tensor.take is ts.take
    idx = np.array([[0, -1], [5, 2]])
    want = torch.take(torch.from_numpy(X), torch.from_numpy(idx))
    assert_same(ts.take(ts.asarray(X), ts.asarray(idx)), want)
    assert_same(ts.take(input=ts.asarray(X), index=ts.asarray(idx)), want)
    assert_same(ts.asarray(X).T.take(ts.asarray(idx)), torch.from_numpy(X).T.take(torch.from_numpy(idx)))
    for axis in (0, 1, -1):
        assert_same(ts.take(ts.asarray(X), ts.asarray([2, 0, -1]), axis=axis),
                    np.take(X, [2, 0, -1], axis=axis))
        assert_same(ts.take(ts.asarray(X), indices=ts.asarray([1]), axis=axis),
                    np.take(X, [1], axis=axis))
    assert_same(ts.take(ts.asarray(X), ts.zeros(0, dtype=ts.int64)), np.take(X, np.zeros(0, int)))
    compare_grads(lambda a: ts.take(a, ts.asarray(idx)), lambda a: torch.take(a, torch.from_numpy(idx)), [X])


def test_take_errors_name_the_op():
    x = ts.asarray(X)
    with pytest.raises(IndexError, match="take: index 12 is out of bounds"):
        ts.take(x, ts.asarray([12]))
    with pytest.raises(IndexError, match="take: axis 2 is out of bounds"):
        ts.take(x, ts.asarray([0]), axis=2)
    with pytest.raises(TypeError, match="take: indices must be an integer tensor"):
        ts.take(x, ts.asarray([0.5]))
    with pytest.raises(TypeError, match="take\\(\\) got multiple values"):
        ts.take(x, ts.asarray([0]), indices=ts.asarray([0]))
