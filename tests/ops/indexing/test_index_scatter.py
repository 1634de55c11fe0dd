"""PyTorch's scatter reductions as one C++ op each (csrc/ops/indexing_scatter.cpp, bound in
csrc/python/bind_index_forms.cpp, gradients in csrc/autograd/formulas_indexing_scatter.cpp):
values, dtypes and float64 gradients against PyTorch, including repeated and negative indices,
empty, 0-d and non-contiguous operands, and the errors the ops raise."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, compare_grads, same_as_torch

REDUCES = ["sum", "prod", "mean", "amax", "amin"]
X = np.arange(12, dtype=np.float64).reshape(3, 4) - 5.0
SRC = np.array([[1.5, -2.0, 3.0, 0.5], [4.0, 0.0, -1.0, 2.0]])
IDX = np.array([[0, 1, 0, 1], [2, 2, 0, 0]])  # repeats: (0, col 2/3) gets two values


def test_scatter_reduce_is_one_function():
    assert ts.Tensor.scatter_reduce is ts.scatter_reduce
    params = inspect.signature(ts.scatter_reduce).parameters
    assert list(params)[:5] == ["input", "dim", "index", "src", "reduce"]
    assert params["include_self"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_scatter_reduce_values_match_torch(reduce, include_self, dtype):
    x, s = X.astype(dtype), SRC.astype(dtype)
    got = ts.asarray(x).scatter_reduce(0, ts.asarray(IDX), ts.asarray(s), reduce,
                                       include_self=include_self)
    want = torch.from_numpy(x).scatter_reduce(0, torch.from_numpy(IDX), torch.from_numpy(s),
                                              reduce, include_self=include_self)
    assert_same(got, want)


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_dim1_noncontiguous_and_larger_src(reduce):
    x = np.asfortranarray(np.random.default_rng(0).standard_normal((4, 5)))
    s = np.random.default_rng(1).standard_normal((6, 7))[::2, ::2]  # (3, 4), strided
    idx = np.array([[4, 0, 4], [1, 1, 1], [3, 2, 3]])
    for inc in (True, False):
        got = ts.scatter_reduce(ts.asarray(x).T.T, 1, ts.asarray(idx), ts.asarray(s), reduce,
                                include_self=inc)
        want = torch.scatter_reduce(torch.from_numpy(x), 1, torch.from_numpy(idx),
                                    torch.from_numpy(s.copy()), reduce, include_self=inc)
        assert_same(got, want)


def test_scatter_reduce_empty_0d_and_negative_index():
    x = ts.asarray(X)
    empty = ts.zeros((0, 4), dtype=ts.int64)
    assert_same(x.scatter_reduce(0, empty, ts.zeros((0, 4), dtype=ts.float64), "amax"),
                torch.from_numpy(X))
    z = ts.asarray(3.0, dtype=ts.float64)
    want = torch.tensor(3.0, dtype=torch.float64).scatter_reduce(
        0, torch.tensor([0, 0]), torch.tensor([2.0, 5.0], dtype=torch.float64), "prod")
    assert_same(z.scatter_reduce(0, ts.asarray([0, 0]), ts.asarray([2.0, 5.0], dtype=ts.float64),
                                 "prod"), want)
    # torch's scatter_reduce takes no negative indices (RuntimeError, as gather and scatter)
    neg = np.where(IDX == 2, -1, IDX)
    same_as_torch(lambda m: m.from_numpy(X).scatter_reduce(0, m.from_numpy(neg),
                                                           m.from_numpy(SRC), "mean"),
                  exact_error=True)


def test_scatter_reduce_nan_propagates_in_amax_amin():
    x = np.array([1.0, 2.0, np.nan])
    s = np.array([np.nan, 5.0, 0.0])
    i = np.array([0, 1, 2])
    for r in ("amax", "amin"):
        assert_same(ts.asarray(x).scatter_reduce(0, ts.asarray(i), ts.asarray(s), r),
                    torch.from_numpy(x).scatter_reduce(0, torch.from_numpy(i),
                                                       torch.from_numpy(s), r))


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gradients_match_torch(reduce, include_self):
    """float64 gradients of input and src, with ties (amax/amin) and zeros (prod)."""
    x = X.copy()
    s = SRC.copy()
    s[0, 2] = x[0, 2]  # a tie between self and src
    s[1, 3] = s[0, 3]  # a tie between two src values
    i = IDX
    compare_grads(lambda a, b: a.scatter_reduce(0, ts.asarray(i), b, reduce,
                                                include_self=include_self),
                  lambda a, b: a.scatter_reduce(0, torch.from_numpy(i), b, reduce,
                                                include_self=include_self), [x, s])


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "prod"])
def test_scatter_reduce_double_backward_matches_torch(reduce):
    x, s = X.copy() + 0.5, SRC.copy() + 0.25
    out = []
    for lib, mk in ((ts, lambda a: ts.asarray(a, requires_grad=True)),
                    (torch, lambda a: torch.tensor(a, requires_grad=True))):
        a, b = mk(x), mk(s)
        idx = lib.asarray(IDX) if lib is ts else torch.from_numpy(IDX)
        y = a.scatter_reduce(0, idx, b, reduce)
        (gb,) = (ts.autograd.grad if lib is ts else torch.autograd.grad)(
            (y * y).sum(), [b], create_graph=True)
        (gg,) = (ts.autograd.grad if lib is ts else torch.autograd.grad)(gb.sum(), [a])
        out.append(np.asarray(gg.detach().numpy()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10, atol=1e-10)


def test_scatter_reduce_in_place_and_out():
    x = ts.asarray(X.copy())
    assert x.scatter_reduce_(0, ts.asarray(IDX), ts.asarray(SRC), "amin", include_self=False) is x
    want = torch.from_numpy(X.copy()).scatter_reduce_(0, torch.from_numpy(IDX),
                                                      torch.from_numpy(SRC), "amin",
                                                      include_self=False)
    assert_same(x, want)
    out = ts.zeros((3, 4), dtype=ts.float64)
    assert ts.scatter_reduce(ts.asarray(X), 0, ts.asarray(IDX), ts.asarray(SRC), "sum",
                             out=out) is out
    # reduce='multiply' of scatter is this op's prod
    assert_same(ts.asarray(X).scatter(0, ts.asarray(IDX), ts.asarray(SRC), reduce="multiply"),
                torch.from_numpy(X).scatter_reduce(0, torch.from_numpy(IDX),
                                                   torch.from_numpy(SRC), "prod"))


def test_scatter_reduce_errors_name_the_op():
    x, i, s = ts.asarray(X), ts.asarray(IDX), ts.asarray(SRC)
    with pytest.raises(RuntimeError, match="scatter_reduce.*out of bounds for dimension 0"):
        x.scatter_reduce(0, ts.asarray([[0, 3, 0, 0]]), s, "sum")
    with pytest.raises(RuntimeError, match="scatter_reduce"):
        x.scatter_reduce(0, ts.asarray([[0, -4, 0, 0]]), s, "amax")
    with pytest.raises(RuntimeError, match="scatter_reduce.*same dtype"):
        x.scatter_reduce(0, i, s.astype(ts.float32), "sum")
    with pytest.raises(RuntimeError, match="scatter_reduce.*reduce"):
        x.scatter_reduce(0, i, s, "max")
    with pytest.raises(TypeError, match="scatter_reduce.*reduce must be a str"):
        x.scatter_reduce(0, i, s, 1)
    with pytest.raises(TypeError, match="scatter_reduce.*index must be an integer"):
        x.scatter_reduce(0, i.astype(ts.float32), s, "sum")
    with pytest.raises(TypeError, match="scatter_reduce.*complex"):
        ts.zeros(3, dtype=ts.complex64).scatter_reduce(0, ts.asarray([0]),
                                                       ts.ones(1, dtype=ts.complex64), "amax")
