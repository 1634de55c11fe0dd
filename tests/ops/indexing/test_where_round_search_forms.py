"""where, round and searchsorted as one C++ binding each (csrc/python/bind_index_forms.cpp),
taking the array API's forms and PyTorch's: where(condition) and condition=/input=/other=,
round(decimals=), searchsorted(side=/right=/sorter=/out_int32=, N-D). Values against PyTorch,
including empty, 0-d and non-contiguous inputs, and the errors (class and op name)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, compare_grads

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 5)) * 50


def test_one_definition_each():
    assert ts.Tensor.round is ts.round
    assert list(inspect.signature(ts.round).parameters) == ["x", "decimals", "out"]
    assert "round" in ts.Tensor.round_.__doc__
    assert list(inspect.signature(ts.where).parameters)[:3] == ["condition", "input", "other"]
    assert "right" in inspect.signature(ts.searchsorted).parameters


# ---- where
@pytest.mark.parametrize("shape", [(3, 5), (0, 2), ()])
def test_where_forms_match_torch(shape):
    a = rng.standard_normal(shape)
    x, t = ts.asarray(a), torch.from_numpy(a)
    assert_same(ts.where(x > 0, x, 0.0), torch.where(t > 0, t, 0.0))
    assert_same(ts.where(condition=x > 0, input=x, other=-x), torch.where(t > 0, t, -t))
    assert_same(x.where(x > 0, 1.5), t.where(t > 0, 1.5))
    assert_same(ts.where(x > 0), torch.where(t > 0))


def test_where_non_contiguous_and_out_and_grad():
    a = A.T  # a transposed view
    x, t = ts.asarray(A).T, torch.from_numpy(A).T
    assert_same(ts.where(x > 0, x, x * 2), torch.where(t > 0, t, t * 2))
    out = ts.empty((5, 3), dtype=ts.float64)
    assert ts.where(x > 0, x, 0.0, out=out) is out
    assert_same(out, torch.where(t > 0, t, 0.0))
    compare_grads(lambda p, q: ts.where(p > 0, p, q), lambda p, q: torch.where(p > 0, p, q),
                  [a, a[::-1].copy()])


def test_where_errors():
    x = ts.asarray([1.0, 2.0])
    with pytest.raises(TypeError, match="where.*missing required argument 'other'"):
        ts.where(x > 0, x)
    with pytest.raises(TypeError, match="where.*missing required argument 'input'"):
        ts.where(x > 0, other=x)
    with pytest.raises(ValueError, match="where"):
        ts.where(x > 0, ts.ones(3), x)
    with pytest.raises(TypeError, match="where: out="):
        ts.where(x > 0, out=ts.empty(2))


# ---- round
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_round_decimals_matches_torch(decimals, dtype):
    a = A.astype(dtype)
    assert_same(ts.round(ts.asarray(a), decimals=decimals),
                torch.round(torch.from_numpy(a), decimals=decimals))
    assert_same(ts.asarray(a)[:, ::2].round(decimals=decimals),
                torch.from_numpy(a)[:, ::2].round(decimals=decimals))
    x, t = ts.asarray(a.copy()), torch.from_numpy(a.copy())
    assert x.round_(decimals=decimals) is x
    assert_same(x, t.round_(decimals=decimals))


def test_round_empty_0d_int_and_out():
    assert_same(ts.round(ts.zeros((0, 3)), decimals=2), torch.round(torch.zeros(0, 3), decimals=2))
    assert_same(ts.round(ts.asarray(2.675), decimals=2), torch.round(torch.tensor(2.675), decimals=2))
    assert_same(ts.round(ts.asarray([3, -7])), torch.round(torch.tensor([3, -7])))
    out = ts.empty(2)
    assert ts.round(ts.asarray([1.26, 2.5]), decimals=1, out=out) is out
    with pytest.raises(TypeError, match="round: decimals=2 is not implemented for int64"):
        ts.round(ts.asarray([3, -7]), decimals=2)
    with pytest.raises(TypeError, match="round: decimals must be an int"):
        ts.round(ts.asarray([1.5]), decimals=1.5)


def test_round_decimals_gradient_is_zero_as_torch():
    compare_grads(lambda p: ts.round(p, decimals=1), lambda p: torch.round(p, decimals=1), [A])


# ---- searchsorted
SEQ = np.array([1.0, 2.0, 2.0, 3.5, 7.0])
VALS = np.array([[0.0, 2.0, 7.0], [3.5, 9.0, np.nan]])


@pytest.mark.parametrize("kw", [{}, {"right": True}, {"side": "right"}, {"side": "left"},
                                {"right": False, "side": "left"}, {"out_int32": True}])
def test_searchsorted_forms_match_torch(kw):
    assert_same(ts.searchsorted(ts.asarray(SEQ), ts.asarray(VALS), **kw),
                torch.searchsorted(torch.from_numpy(SEQ), torch.from_numpy(VALS), **kw))


def test_searchsorted_nd_sorter_empty_and_noncontiguous():
    seq = np.sort(rng.standard_normal((2, 3, 6)), axis=-1)
    vals = rng.standard_normal((2, 3, 4))
    for right in (False, True):
        assert_same(ts.searchsorted(ts.asarray(seq), ts.asarray(vals), right=right),
                    torch.searchsorted(torch.from_numpy(seq), torch.from_numpy(vals), right=right))
    shuffled = rng.standard_normal((2, 5))
    order = np.argsort(shuffled, axis=-1)
    v = rng.standard_normal((2, 3))
    assert_same(ts.searchsorted(ts.asarray(shuffled), ts.asarray(v), sorter=ts.asarray(order)),
                torch.searchsorted(torch.from_numpy(shuffled), torch.from_numpy(v),
                                   sorter=torch.from_numpy(order)))
    assert_same(ts.searchsorted(ts.zeros((0, 3)), ts.zeros((0, 2))),
                torch.searchsorted(torch.zeros(0, 3), torch.zeros(0, 2)))
    assert_same(ts.searchsorted(ts.asarray(SEQ), ts.asarray(3.0)),
                torch.searchsorted(torch.from_numpy(SEQ), torch.tensor(3.0, dtype=torch.float64)))
    strided = np.array([1.0, 9.0, 2.0, 9.0, 4.0])[::2]
    assert_same(ts.searchsorted(ts.asarray(np.array([1.0, 9.0, 2.0, 9.0, 4.0]))[::2],
                                ts.asarray(VALS)[:, ::2]),
                torch.searchsorted(torch.from_numpy(strided.copy()),
                                   torch.from_numpy(VALS[:, ::2].copy())))


def test_searchsorted_errors():
    s = ts.asarray(SEQ)
    with pytest.raises(RuntimeError, match="searchsorted: side and right can't be set to opposites"):
        ts.searchsorted(s, s, side="left", right=True)
    with pytest.raises(ValueError, match="searchsorted: side must be 'left' or 'right'"):
        ts.searchsorted(s, s, side="middle")
    for exc in (ValueError, RuntimeError):  # torch raises RuntimeError, NumPy ValueError
        with pytest.raises(exc, match="searchsorted.*leading dims"):
            ts.searchsorted(ts.ones((2, 3)), ts.ones((3, 1)))
    with pytest.raises(ValueError, match="searchsorted: boundary and sorter"):
        ts.searchsorted(ts.ones((2, 3)), ts.ones((2, 1)), sorter=ts.zeros((2, 2), dtype=ts.int64))
    with pytest.raises(TypeError, match="searchsorted.*complex"):
        ts.searchsorted(ts.ones(3, dtype=ts.complex64), ts.ones(1, dtype=ts.complex64))
