"""The reductions whose every argument form is parsed by its binding (issue 17,
csrc/python/bind_reduction.cpp) and the order statistics that became C++ ops
(csrc/ops/order_stats.cpp): forms against PyTorch and NumPy, named tuples, the deliberate
difference between the standard's ts.max(x, axis=1) and PyTorch's x.max(1), and gradients
against PyTorch and finite differences in float64."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import _C
from harness import compare_grads

A = np.arange(24, dtype=np.float64).reshape(2, 3, 4) % 7 - 2.5  # with ties


def pair():
    return ts.asarray(A), torch.tensor(A)


def same(got, want) -> None:
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and type(got).__name__ == type(want).__name__.split(".")[-1]
        assert got._fields == tuple(f for f in ("values", "indices", "min", "max")
                                    if hasattr(want, f))
        for g, w in zip(got, want):
            same(g, w)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


FORMS = [
    ("prod dim", lambda m, x: m.prod(x, 1)), ("prod method", lambda m, x: x.prod(2, True)),
    ("prod dtype", lambda m, x: m.prod(x, 0, dtype=m.float32)),
    ("mean dim=", lambda m, x: m.mean(x, dim=(0, 2), keepdim=True)),
    ("mean method", lambda m, x: x.mean(1)), ("mean dtype", lambda m, x: x.mean(dtype=m.float32)),
    ("all", lambda m, x: m.all(x > 0, 1)), ("any method", lambda m, x: (x > 3).any(2, True)),
    ("argmax", lambda m, x: m.argmax(x, 1)), ("argmin method", lambda m, x: x.argmin(2, True)),
    ("argmax all", lambda m, x: x.argmax()), ("count_nonzero", lambda m, x: m.count_nonzero(x, 1)),
    ("max all", lambda m, x: m.max(x)), ("max dim", lambda m, x: m.max(x, 1)),
    ("max dim=", lambda m, x: m.max(x, dim=2, keepdim=True)), ("min method", lambda m, x: x.min(0)),
    ("max other", lambda m, x: m.max(x, x * 0)), ("min method other", lambda m, x: x.min(x * 0)),
    ("var", lambda m, x: m.var(x, 1)), ("var unbiased", lambda m, x: m.var(x, 1, False)),
    ("std dim= correction", lambda m, x: m.std(x, dim=2, correction=0)),
    ("var method", lambda m, x: x.var()), ("std method keepdim", lambda m, x: x.std(1, keepdim=True)),
    ("var method bool", lambda m, x: x.var(False)), ("std keepdim=", lambda m, x: m.std(x, keepdim=True)),
    ("cumsum", lambda m, x: m.cumsum(x, 1)), ("cumprod method", lambda m, x: x.cumprod(dim=2)),
    ("cumsum dtype", lambda m, x: x.cumsum(0, dtype=m.float32)),
    ("amax", lambda m, x: m.amax(x, (0, 2))), ("amin method", lambda m, x: x.amin(1, True)),
    ("amax all", lambda m, x: x.amax()), ("aminmax", lambda m, x: m.aminmax(x, dim=1)),
    ("aminmax all", lambda m, x: x.aminmax()),
    ("median all", lambda m, x: m.median(x)), ("median dim", lambda m, x: x.median(1)),
    ("nanmedian dim", lambda m, x: m.nanmedian(x, 2, True)),
    ("kthvalue", lambda m, x: m.kthvalue(x, 2, 1)), ("kthvalue method", lambda m, x: x.kthvalue(3)),
    ("nansum", lambda m, x: m.nansum(x, 1)), ("nanmean method", lambda m, x: x.nanmean((0, 2), True)),
    ("nansum int", lambda m, x: m.nansum(x.to(m.int32))),
]


@pytest.mark.parametrize("name,f", FORMS, ids=[n for n, _ in FORMS])
def test_forms_match_torch(name, f) -> None:
    xs, xt = pair()
    same(f(ts, xs), f(torch, xt))


def test_standard_forms_keep_the_standard() -> None:
    xs = ts.asarray(A)
    # Note [torch reductions vs the standard]: the standard's call gives values; correction 0
    np.testing.assert_array_equal(ts.max(xs, axis=1).numpy(), A.max(axis=1))
    np.testing.assert_array_equal(ts.min(xs, axis=(0, 2), keepdims=True).numpy(),
                                  A.min(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(ts.var(xs, axis=1).numpy(), A.var(axis=1))
    np.testing.assert_allclose(ts.std(xs, axis=1, correction=1).numpy(), A.std(axis=1, ddof=1))
    np.testing.assert_allclose(ts.var(xs).numpy(), A.var())
    np.testing.assert_allclose(ts.cumulative_sum(xs, axis=1, include_initial=True).numpy(),
                               np.concatenate([np.zeros((2, 1, 4)), A.cumsum(1)], axis=1))
    # the method with axis= is torch's (values, indices)
    r = xs.max(axis=1)
    assert r._fields == ("values", "indices")


def test_the_bindings_are_the_functions() -> None:
    for name in ("prod", "mean", "var", "std", "max", "min", "all", "any", "argmax", "argmin",
                 "count_nonzero", "cumsum", "cumprod", "cumulative_sum", "amax", "amin",
                 "median", "nanmedian", "kthvalue", "aminmax", "nansum", "nanmean"):
        assert getattr(ts, name) is getattr(_C, name), name
        params = inspect.signature(getattr(ts, name)).parameters
        assert "dim" in params and params["dim"].default is not inspect.Parameter.empty, name


def test_errors() -> None:
    xs = ts.asarray(A)
    with pytest.raises(TypeError, match="got both axis= and its alias dim="):
        ts.max(xs, 1, axis=1)
    with pytest.raises(TypeError, match="got both keepdims= and its alias keepdim="):
        ts.mean(xs, keepdim=True, keepdims=True)
    with pytest.raises(RuntimeError, match="cannot specify both unbiased and correction"):
        xs.var(1, True, correction=0)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float64"):
        ts.prod(xs, 1, dtype=ts.float64, out=ts.empty((2, 4)))  # as torch: dtype= is out's
    with pytest.raises(RuntimeError, match="Optional dtype must be"):
        ts.mean(xs, dtype=ts.int32)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k"):
        xs.kthvalue(9, 1)
    with pytest.raises(IndexError, match="non-zero size"):
        ts.zeros((2, 0)).max(1)
    with pytest.raises(RuntimeError, match="aminmax"):
        ts.zeros((0,)).aminmax()
    with pytest.raises(TypeError, match="dim must be an int"):
        xs.median("a")


def test_nan_and_zero_d_and_empty() -> None:
    a = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 0.5, 2.0, 8.0], [np.nan] * 4])
    for f in (lambda m, x: m.median(x, 1), lambda m, x: m.nanmedian(x[:2], 1),
              lambda m, x: m.max(x, 1), lambda m, x: m.median(x), lambda m, x: m.nanmedian(x),
              lambda m, x: m.nansum(x, 1), lambda m, x: x.nanmean(0)):
        same(f(ts, ts.asarray(a)), f(torch, torch.tensor(a)))
    # an all-NaN slice: NaN at the index of one of its NaNs (which one is torch's kernel's
    # detail; tessera picks the first)
    v, i = ts.nanmedian(ts.asarray(a), 1)
    assert np.isnan(v.numpy()[2]) and i.numpy()[2] == 0
    z = np.float64(2.5)
    for f in (lambda m, x: m.max(x, 0), lambda m, x: x.median(-1), lambda m, x: x.kthvalue(1, 0),
              lambda m, x: m.var(x, 0, False), lambda m, x: x.amax(0)):
        same(f(ts, ts.asarray(z)), f(torch, torch.tensor(z)))
    for dt in ("float32", "int64", "int32"):
        same(ts.median(ts.zeros(0, dtype=getattr(ts, dt))),
             torch.median(torch.zeros(0, dtype=getattr(torch, dt))))


GRAD_FORMS = [
    ("max dim", lambda m, x: m.max(x, 1)[0]), ("min dim", lambda m, x: x.min(2, True).values),
    ("amax", lambda m, x: m.amax(x, 1)), ("amin all", lambda m, x: m.amin(x)),
    ("median dim", lambda m, x: m.median(x, 1)[0]), ("median all", lambda m, x: m.median(x)),
    ("nanmedian dim", lambda m, x: m.nanmedian(x, 0).values),
    ("kthvalue", lambda m, x: m.kthvalue(x, 2, 2)[0]),
    ("var dim", lambda m, x: m.var(x, 1)), ("nanmean", lambda m, x: m.nanmean(x, 1)), ("std method", lambda m, x: x.std(2, keepdim=True)),
]


@pytest.mark.parametrize("name,f", GRAD_FORMS, ids=[n for n, _ in GRAD_FORMS])
def test_gradients_match_torch(name, f) -> None:
    compare_grads(lambda x: f(ts, x), lambda x: f(torch, x), [A])


@pytest.mark.parametrize("name,f", GRAD_FORMS, ids=[n for n, _ in GRAD_FORMS])
def test_gradients_match_finite_differences(name, f) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4))  # distinct values: the picks are smooth
    x = ts.asarray(a, requires_grad=True)
    cot = rng.standard_normal(tuple(f(ts, ts.asarray(a)).shape))
    ts.sum(f(ts, x) * ts.asarray(cot)).backward()
    eps = 1e-6
    num = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        hi = f(ts, ts.asarray(a + d)).numpy()
        lo = f(ts, ts.asarray(a - d)).numpy()
        num[i] = np.sum((hi - lo) * cot) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-6, atol=1e-7)


def test_median_all_gradient_is_shared_by_ties() -> None:
    a = np.array([1.0, 2.0, 2.0, 3.0, 2.0])
    xs, xt = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    ts.median(xs).backward()
    torch.median(xt).backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy())
    assert ts.median(xs).grad_fn.name().startswith("MedianBackward")
