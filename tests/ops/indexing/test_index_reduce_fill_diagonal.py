"""index_reduce / index_reduce_, fill_diagonal_, unravel_index and as_strided_scatter (C++ ops:
csrc/ops/indexing_scatter.cpp, bound in csrc/python/bind_index_forms.cpp) against PyTorch:
values over shapes, dtypes and layouts, gradients (float64), errors."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, compare_grads, same_as_torch, strided_views

REDUCES = ["prod", "mean", "amax", "amin"]


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_index_reduce_matches_torch(data) -> None:
    nd = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))
    dim = data.draw(st.integers(-nd, nd - 1))
    n = data.draw(st.integers(0, 5))
    dtype = data.draw(st.sampled_from(["float32", "float64", "int64", "int32"]))
    reduce = data.draw(st.sampled_from(REDUCES))
    include_self = data.draw(st.booleans())
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    sshape = list(shape)
    sshape[dim] = n
    src = (rng.standard_normal(sshape) * 4).astype(dtype)
    index = rng.integers(0, shape[dim], n)
    xs = strided_views(data.draw, x)
    want = torch.from_numpy(xs.copy()).index_reduce(dim, torch.from_numpy(index),
                                                    torch.from_numpy(src), reduce,
                                                    include_self=include_self)
    got = ts.asarray(xs).index_reduce(dim, ts.asarray(index), ts.asarray(src), reduce,
                                      include_self=include_self)
    assert_same(got, want, rtol=1e-5, atol=1e-5)
    assert_same(ts.index_reduce(ts.asarray(xs), dim, ts.asarray(index), ts.asarray(src), reduce,
                                include_self=include_self), want, rtol=1e-5, atol=1e-5)
    y = ts.asarray(xs.copy())
    assert y.index_reduce_(dim, ts.asarray(index), ts.asarray(src), reduce,
                           include_self=include_self) is y
    assert_same(y, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_gradients(reduce: str, include_self: bool) -> None:
    rng = np.random.default_rng(0)
    x, src = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    idx = np.array([0, 2, 0, 3, 2])
    compare_grads(lambda a, b: a.index_reduce(0, ts.asarray(idx), b, reduce,
                                              include_self=include_self),
                  lambda a, b: a.index_reduce(0, torch.from_numpy(idx), b, reduce,
                                              include_self=include_self), [x, src])
    # the in-place form records the same gradient (torch: differentiable)
    compare_grads(lambda a, b: (a * 1).index_reduce_(1, ts.asarray([1, 1]), b[:, :2], reduce,
                                                     include_self=include_self),
                  lambda a, b: (a * 1).index_reduce_(1, torch.tensor([1, 1]), b[:, :2], reduce,
                                                     include_self=include_self),
                  [x, src[:4]])


def test_index_reduce_gradcheck() -> None:
    x = ts.asarray(np.random.default_rng(1).standard_normal((3, 2)) + 2, requires_grad=True)
    s = ts.asarray(np.random.default_rng(2).standard_normal((4, 2)) + 2, requires_grad=True)
    i = ts.asarray([0, 2, 2, 1])
    assert ts.autograd.gradcheck(lambda a, b: a.index_reduce(0, i, b, "prod"), (x, s))
    assert ts.autograd.gradcheck(lambda a, b: a.index_reduce(0, i, b, "mean"), (x, s))


def test_index_reduce_errors() -> None:
    x, s, i = (lambda m: m.zeros(3, 2)), (lambda m: m.ones(2, 2)), (lambda m: m.tensor([0, 1]))
    same_as_torch(lambda m: x(m).index_reduce(0, i(m), s(m), "sum"), exact_error=True)
    same_as_torch(lambda m: x(m).index_reduce(0, i(m).reshape(2, 1), s(m), "prod"))
    same_as_torch(lambda m: x(m).index_reduce(0, i(m).float(), s(m), "prod"), exact_error=True)
    same_as_torch(lambda m: x(m).index_reduce(0, i(m), s(m).double(), "prod"), exact_error=True)
    same_as_torch(lambda m: x(m).index_reduce(0, m.tensor([0, 1, 2]), s(m), "prod"))
    same_as_torch(lambda m: x(m).index_reduce(0, i(m), s(m), 3), exact_error=True)
    with pytest.raises(RuntimeError, match=r"index_reduce\(\): Expected reduce"):
        ts.zeros(3).index_reduce(0, ts.asarray([0]), ts.ones(1), "sum")


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_fill_diagonal_matches_torch(data) -> None:
    nd = data.draw(st.integers(2, 4))
    if nd == 2:
        shape = data.draw(st.lists(st.integers(0, 7), min_size=2, max_size=2))
    else:
        shape = [data.draw(st.integers(0, 3))] * nd
    dtype = data.draw(st.sampled_from(["float32", "int64", "bool", "complex64"]))
    wrap = data.draw(st.booleans())
    value = data.draw(st.sampled_from([1, 2.5, -3, True]))
    x = np.zeros(shape, dtype)
    x = strided_views(data.draw, x)
    want = torch.from_numpy(x.copy()).fill_diagonal_(value, wrap=wrap)
    got = ts.asarray(x.copy())
    assert got.fill_diagonal_(value, wrap=wrap) is got
    assert_same(got, want)
    # a transposed (non-contiguous) tensor is filled through its view (torch's wrap=True
    # reads out of bounds there)
    if nd == 2 and not wrap:
        base = np.zeros(shape[::-1], dtype)
        tb, gb = torch.from_numpy(base.copy()), ts.asarray(base.copy())
        tb.t().fill_diagonal_(value, wrap=wrap)
        gb.t().fill_diagonal_(value, wrap=wrap)
        assert_same(gb, tb)


def test_fill_diagonal_gradient_and_errors() -> None:
    rng = np.random.default_rng(3)
    compare_grads(lambda a: (a * 2).fill_diagonal_(0.5), lambda a: (a * 2).fill_diagonal_(0.5),
                  [rng.standard_normal((4, 3))])
    same_as_torch(lambda m: m.zeros(3).fill_diagonal_(1))
    same_as_torch(lambda m: m.zeros(2, 3, 2).fill_diagonal_(1))
    same_as_torch(lambda m: m.zeros(2, 2, requires_grad=True).fill_diagonal_(1))
    with pytest.raises(RuntimeError, match="fill_diagonal_: dimensions must larger than 1"):
        ts.zeros(3).fill_diagonal_(1)
    assert_same(ts.zeros((2, 2)).fill_diagonal_(ts.asarray(4.0)), torch.eye(2) * 4)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_unravel_index_matches_torch(data) -> None:
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=0, max_size=4)))
    n = int(np.prod(shape))
    dtype = data.draw(st.sampled_from(["int64", "int32", "int16", "uint8"]))
    idx_shape = data.draw(st.lists(st.integers(0, 3), max_size=2))
    lo = 0 if dtype == "uint8" else -2 * n
    idx = np.random.default_rng(data.draw(st.integers(0, 999))).integers(
        lo, min(2 * n + 1, 255), idx_shape).astype(dtype)
    want = torch.unravel_index(torch.from_numpy(idx), shape)
    got = ts.unravel_index(ts.asarray(idx), shape)
    assert isinstance(got, tuple)
    assert_same(got, want)
    assert_same(ts.unravel_index(ts.asarray(idx), shape=shape), want)
    if idx.ndim == 0:
        assert_same(ts.unravel_index(int(idx), shape), want)


def test_unravel_index_forms_and_errors() -> None:
    assert_same(ts.unravel_index(ts.asarray([7, 3]), 5), torch.unravel_index(torch.tensor([7, 3]), 5))
    assert_same(ts.unravel_index([7, 3], (2, 4)), torch.unravel_index(torch.tensor([7, 3]), (2, 4)))
    same_as_torch(lambda m: m.unravel_index(m.tensor([1.0]), (2, 3)), exact_error=True)
    same_as_torch(lambda m: m.unravel_index(m.tensor([True]), (2, 3)), exact_error=True)
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        ts.unravel_index(ts.asarray([1.0]), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        ts.unravel_index(ts.asarray([1]), (2, -3))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_as_strided_scatter_matches_torch(data) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    dtype = data.draw(st.sampled_from(["float32", "int64", "complex64"]))
    x = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    x = strided_views(data.draw, x)
    n = x.size
    k = data.draw(st.integers(0, n))
    step = data.draw(st.integers(1, 3))
    cnt = 0 if k == 0 else (n - 1) // step + 1
    cnt = min(cnt, k)
    off = data.draw(st.integers(0, n - 1 - (cnt - 1) * step if cnt else n))
    src = np.full((cnt,), 7, dtype)
    kw = {} if data.draw(st.booleans()) else {"storage_offset": off}
    want = torch.as_strided_scatter(torch.from_numpy(x.copy()), torch.from_numpy(src), (cnt,),
                                    (step,), **kw)
    got = ts.as_strided_scatter(ts.asarray(x.copy()), ts.asarray(src), (cnt,), (step,), **kw)
    assert_same(got, want)
    assert got.stride() == want.stride()
    assert_same(ts.asarray(x.copy()).as_strided_scatter(ts.asarray(src), [cnt], [step], **kw),
                want)


def test_as_strided_scatter_gradient_and_errors() -> None:
    # src's gradient is torch's; input's is the gradient outside the scattered region (torch
    # 2.x returns the region's instead, which fails torch's own gradcheck: tessera keeps the
    # correct one, checked by gradcheck below)
    rng = np.random.default_rng(4)
    compare_grads(lambda b: ts.as_strided_scatter(ts.zeros((3, 3), dtype=ts.float64), b, (2, 2),
                                                  (1, 3), 1),
                  lambda b: torch.as_strided_scatter(torch.zeros(3, 3, dtype=torch.float64), b,
                                                     (2, 2), (1, 3), 1),
                  [rng.standard_normal((2, 2))])
    x = ts.zeros((3, 3), dtype=ts.float64, requires_grad=True)
    ts.as_strided_scatter(x, ts.ones((2, 2), dtype=ts.float64), (2, 2), (1, 3), 1).sum().backward()
    assert_same(x.grad, np.array([[1.0, 0, 0], [1, 0, 0], [1, 1, 1]]))
    x = ts.asarray(rng.standard_normal((3, 3)), requires_grad=True)
    s = ts.asarray(rng.standard_normal(3), requires_grad=True)
    assert ts.autograd.gradcheck(lambda a, b: ts.as_strided_scatter(a, b, (3,), (4,)), (x, s))
    same_as_torch(lambda m: m.as_strided_scatter(m.zeros(3, 3), m.ones(2), (3,), (4,)))
    same_as_torch(lambda m: m.as_strided_scatter(m.zeros(3, 3), m.ones(3), (3,), (5,)))
    with pytest.raises(RuntimeError, match="as_strided_scatter: expected src to have a size"):
        ts.as_strided_scatter(ts.zeros((3, 3)), ts.ones(2), (3,), (4,))
