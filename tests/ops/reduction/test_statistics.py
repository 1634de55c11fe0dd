"""PyTorch's statistics that became C++ ops written with ops (csrc/ops/statistics.cpp, bound in
csrc/python/bind_reduction.cpp): logsumexp, cummax / cummin, mode, quantile / nanquantile,
var_mean / std_mean and diff. Values, indices, shapes and dtypes against PyTorch (NaNs, ties,
0-d and empty inputs included), gradients against PyTorch in float64, the signatures that
help() shows, and the Tensor methods being the namespace functions themselves."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import compare_grads

rng = np.random.default_rng(17)
SHAPES_DIMS = [((6,), 0), ((4, 7), 1), ((4, 7), 0), ((3, 4, 5), -1), ((3, 4, 5), 1), ((), 0),
               ((), -1)]


def same(got, want, tol=1e-6) -> None:
    if isinstance(want, tuple):
        assert type(got).__name__ == type(want).__name__.split(".")[-1]
        for g, w in zip(got, want):
            same(g, w, tol)
        return
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol, equal_nan=True)


def with_ties_and_nans(shape, nans=True):
    a = rng.integers(0, 4, size=shape).astype(np.float64)
    if nans and a.size > 2:
        a.flat[1] = np.nan
        a.flat[a.size - 1] = np.nan
    return a


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS + [((3, 0), 1), ((3, 0), 0)])
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_cummax_cummin_match_torch(name, shape, dim, dtype):
    a = with_ties_and_nans(shape, nans=dtype.startswith("float")).astype(dtype)
    got = getattr(ts, name)(ts.asarray(a), dim)
    want = getattr(torch, name)(torch.from_numpy(a), dim)
    same(got, want)
    same(getattr(ts.asarray(a), name)(dim=dim), want)


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_mode_matches_torch(shape, dim, dtype):
    a = rng.integers(0, 3, size=shape).astype(dtype)
    for keepdim in (False, True):
        got = ts.mode(ts.asarray(a), dim, keepdim)
        want = torch.mode(torch.from_numpy(a), dim, keepdim)
        same(got.values, want.values)
        assert type(got).__name__ == "mode" and got._fields == ("values", "indices")
        same(got.indices, want.indices)  # torch's CPU: the last occurrence


def test_mode_last_occurrence_smallest_on_ties_and_errors():
    x = ts.asarray(np.array([[3, 1, 3, 1, 2], [5, 5, 4, 4, 4]]))
    r = ts.mode(x, 1)
    assert r.values.tolist() == [1, 4] and r.indices.tolist() == [3, 4]
    with pytest.raises(IndexError):
        ts.mode(ts.ones((2, 0)), 1)
    with pytest.raises(NotImplementedError):  # torch's class
        ts.mode(ts.ones((3,), dtype=ts.complex64))


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS + [((3, 0), 1)])
def test_logsumexp_matches_torch(shape, dim):
    a = rng.standard_normal(shape)
    for keepdim in (False, True):
        same(ts.logsumexp(ts.asarray(a), dim, keepdim), torch.logsumexp(torch.from_numpy(a),
                                                                        dim, keepdim))
    if len(shape) == 3:
        same(ts.logsumexp(ts.asarray(a), (0, 2)), torch.logsumexp(torch.from_numpy(a), (0, 2)))
    rows = np.full((2, 3), -np.inf)  # rows of all -inf give -inf, not NaN
    same(ts.logsumexp(ts.asarray(rows), 1), torch.logsumexp(torch.from_numpy(rows), 1))
    assert ts.logsumexp(ts.asarray(np.arange(4)), 0).dtype == ts.float32


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("shape,dim", SHAPES_DIMS)
def test_quantile_nanquantile_match_torch(interpolation, shape, dim):
    a = rng.standard_normal(shape)
    b = with_ties_and_nans(shape)
    qs = [0.0, 0.3, 1.0, np.array(0.75), np.array([0.1, 0.5, 0.9])]
    for q in qs:
        tq, pq = (q, q) if isinstance(q, float) else (ts.asarray(q), torch.from_numpy(q))
        for d in (dim, None):
            for keepdim in (False, True):
                same(ts.quantile(ts.asarray(a), tq, d, keepdim, interpolation=interpolation),
                     torch.quantile(torch.from_numpy(a), pq, d, keepdim,
                                    interpolation=interpolation))
                same(ts.nanquantile(ts.asarray(b), tq, d, keepdim, interpolation=interpolation),
                     torch.nanquantile(torch.from_numpy(b), pq, d, keepdim,
                                       interpolation=interpolation))
                same(ts.asarray(b).quantile(tq, d, keepdim, interpolation=interpolation),
                     torch.from_numpy(b).quantile(pq, d, keepdim, interpolation=interpolation))


def test_quantile_errors_as_torch():
    x = ts.ones((3, 4))
    for call, cls in [(lambda: ts.quantile(x, 1.5), RuntimeError),
                      (lambda: ts.quantile(ts.ones((3,), dtype=ts.int64), 0.5), RuntimeError),
                      (lambda: ts.quantile(x, ts.ones((2, 2)) / 2), RuntimeError),
                      (lambda: ts.quantile(x, ts.asarray(np.array([0.5]))), RuntimeError),
                      (lambda: ts.quantile(ts.ones((0,)), 0.5), RuntimeError),
                      (lambda: ts.quantile(x, 0.5, interpolation="cubic"), ValueError),
                      # a list of quantiles: torch's TypeError (it was read as its first item)
                      (lambda: ts.quantile(x, [0.1, 0.5]), TypeError)]:
        with pytest.raises(cls) as e:
            call()
        assert "quantile" in str(e.value)
    with pytest.raises(TypeError):
        torch.quantile(torch.ones(3, 4), [0.1, 0.5])


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_std_mean_match_torch(name):
    a = rng.standard_normal((3, 4, 5))
    forms = [((), {}), ((1,), {}), (((0, 2),), {}), ((1, False), {}), ((1, True, True), {}),
             ((), {"dim": 2, "correction": 0}), ((False,), {}), ((), {"keepdim": True}),
             ((), {"dim": [0, 1], "unbiased": False, "keepdim": True})]
    for args, kwargs in forms:
        got = getattr(ts, name)(ts.asarray(a), *args, **kwargs)
        want = getattr(torch, name)(torch.from_numpy(a), *args, **kwargs)
        assert isinstance(got, tuple) and len(got) == 2
        same(got[0], want[0])
        same(got[1], want[1])
    with pytest.raises(RuntimeError):
        getattr(ts, name)(ts.asarray(a), 1, unbiased=True, correction=0)


def test_diff_forms_match_torch():
    a = rng.standard_normal((3, 5))
    x, t = ts.asarray(a), torch.from_numpy(a)
    same(ts.diff(x), torch.diff(t))
    same(ts.diff(x, 2, 0), torch.diff(t, 2, 0))
    same(ts.diff(x, dim=0), torch.diff(t, dim=0))
    same(ts.diff(x, axis=0), torch.diff(t, dim=0))
    same(x.diff(1, 0, x[:1], x[:2]), t.diff(1, 0, t[:1], t[:2]))
    same(ts.diff(x, n=0), torch.diff(t, n=0))
    with pytest.raises(TypeError):
        ts.diff(x, dim=0, axis=0)
    with pytest.raises(TypeError):  # a tensor as torch requires
        ts.diff([1.0, 2.0])


@pytest.mark.parametrize("f", [
    lambda m, x: m.logsumexp(x, 1),
    lambda m, x: m.logsumexp(x, (0, 2), True),
    lambda m, x: m.cummax(x, 1).values,
    lambda m, x: m.cummin(x, 2).values,
    lambda m, x: m.mode(x, 1).values,
    lambda m, x: m.quantile(x, 0.3, 1),
    lambda m, x: m.quantile(x, m.tensor([0.2, 0.9], dtype=m.float64) if m is torch
                            else m.asarray(np.array([0.2, 0.9])), None),
    lambda m, x: m.nanquantile(x, 0.5, 0, interpolation="midpoint"),
    lambda m, x: m.var_mean(x, 1),
    lambda m, x: m.std_mean(x, (0, 1), correction=0),
    lambda m, x: m.diff(x, 2, 1),
])
def test_gradients_match_torch(f):
    a = rng.integers(0, 5, size=(3, 4, 5)) + rng.standard_normal((3, 4, 5)) * 1e-3
    compare_grads(lambda x: f(ts, x), lambda x: f(torch, x), [a])


def test_signatures_and_methods_are_the_functions():
    for name in ("logsumexp", "cummax", "cummin", "mode", "quantile", "nanquantile", "diff",
                 "logcumsumexp", "msort"):
        assert getattr(ts.Tensor, name) is getattr(ts, name)
        assert ts.__dict__[name].__doc__
    assert str(inspect.signature(ts.quantile)) == (
        "(input, q, dim=None, keepdim=False, *, interpolation='linear')")
    assert str(inspect.signature(ts.var_mean)) == (
        "(input, dim=None, unbiased=None, keepdim=False, *, correction=None)")
    assert str(inspect.signature(ts.diff)) == (
        "(input, n=1, dim=None, prepend=None, append=None, *, axis=None)")
    assert list(inspect.signature(ts.ones(2).cummax).parameters) == ["dim"]


@pytest.mark.parametrize("shape,dim", SHAPES_DIMS + [((3, 0), 1)])
def test_logcumsumexp_msort_match_torch(shape, dim):
    a = rng.standard_normal(shape)
    same(ts.logcumsumexp(ts.asarray(a), dim), torch.logcumsumexp(torch.from_numpy(a), dim))
    same(ts.asarray(a).logcumsumexp(dim), torch.from_numpy(a).logcumsumexp(dim))
    same(ts.msort(ts.asarray(a)), torch.msort(torch.from_numpy(a)))
    same(ts.asarray(a).msort(), torch.from_numpy(a).msort())
    inf = np.array([-np.inf, -np.inf, 1.0, -np.inf])
    same(ts.logcumsumexp(ts.asarray(inf), 0), torch.logcumsumexp(torch.from_numpy(inf), 0))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_bucketize_matches_torch(right, out_int32):
    b = np.array([1.0, 3.0, 5.0, 7.0])
    for x in (np.array([[0.0, 1.0, 3.5], [5.0, 7.0, 9.0]]), np.array(3.0)):
        same(ts.bucketize(ts.asarray(x), ts.asarray(b), out_int32=out_int32, right=right),
             torch.bucketize(torch.from_numpy(x), torch.from_numpy(b), out_int32=out_int32,
                             right=right))
    same(ts.bucketize(3, ts.asarray(b), right=right),
         torch.bucketize(3, torch.from_numpy(b), right=right))
    with pytest.raises(RuntimeError, match="bucketize"):
        ts.bucketize(ts.ones(3), ts.ones((2, 2)))


def test_softmax_is_the_functional_op_with_torch_positional_dtype():
    import tessera.nn.functional as F
    assert ts.softmax is F.softmax and ts.log_softmax is F.log_softmax
    assert ts.Tensor.softmax is ts.softmax and ts.Tensor.log_softmax is ts.log_softmax
    a = rng.standard_normal((2, 3)).astype(np.float32)
    for name in ("softmax", "log_softmax"):
        # torch.softmax(x, dim, dtype) takes the dtype in third place (F.softmax's _stacklevel)
        same(getattr(ts, name)(ts.asarray(a), 1, ts.float64),
             getattr(torch, name)(torch.from_numpy(a), 1, torch.float64))
        same(getattr(ts.asarray(a), name)(0, dtype=ts.float64),
             getattr(torch.from_numpy(a), name)(0, dtype=torch.float64))
        same(getattr(ts, name)(ts.asarray(np.float32(2.0)), 0),
             getattr(torch, name)(torch.tensor(2.0), 0))
        with pytest.raises(TypeError):
            getattr(ts, name)(ts.asarray(a), 1, ts.float64, dtype=ts.float64)


@pytest.mark.parametrize("f", [
    lambda m, x: m.logcumsumexp(x, 1),
    lambda m, x: m.msort(x),
])
def test_more_gradients_match_torch(f):
    compare_grads(lambda x: f(ts, x), lambda x: f(torch, x), [rng.standard_normal((3, 4, 5))])


@pytest.mark.parametrize("minlength", [0, 7])
def test_bincount_matches_torch(minlength):
    x = np.array([1, 1, 3, 0, 5, 3, 3])
    for w in (None, rng.standard_normal(7), rng.standard_normal(7).astype(np.float32),
              np.arange(7)):
        got = ts.bincount(ts.asarray(x), None if w is None else ts.asarray(w), minlength)
        want = torch.bincount(torch.from_numpy(x), None if w is None else torch.from_numpy(w),
                              minlength)
        same(got, want)
    same(ts.bincount(ts.asarray(np.zeros(0, np.int64)), minlength=minlength),
         torch.bincount(torch.zeros(0, dtype=torch.int64), minlength=minlength))
    same(ts.asarray(x.astype(np.int32)).bincount(), torch.from_numpy(x.astype(np.int32))
         .bincount())
    for bad in (lambda: ts.bincount(ts.asarray([-1, 2])), lambda: ts.bincount(ts.ones((2, 2))),
                lambda: ts.bincount(ts.asarray([1, 2]), ts.ones(3)),
                lambda: ts.bincount(ts.asarray([1, 2]), minlength=-1)):
        with pytest.raises(RuntimeError, match="bincount"):
            bad()
    # differentiable in weights (torch's bincount is not): d sum(c * out) / dw = c[x]
    w = ts.asarray(rng.standard_normal(7), requires_grad=True)
    c = rng.standard_normal(max(6, minlength))
    ts.sum(ts.bincount(ts.asarray(x), w, minlength) * ts.asarray(c)).backward()
    np.testing.assert_allclose(w.grad.numpy(), c[x])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_matches_torch(dtype):
    a = (rng.standard_normal(50) * 3).astype(dtype)
    for args in ((), (10,), (7, -1.0, 2.0), (5, 2.0, 2.0), (4, 0, 0)):
        same(ts.histc(ts.asarray(a), *args), torch.histc(torch.from_numpy(a), *args))
    same(ts.asarray(a).histc(bins=3, min=-1, max=1),
         torch.from_numpy(a).histc(bins=3, min=-1, max=1))
    same(ts.histc(ts.ones(4, dtype=getattr(ts, dtype)), 3),
         torch.histc(torch.ones(4, dtype=getattr(torch, dtype)), 3))
    same(ts.histc(ts.ones(0, dtype=getattr(ts, dtype)), 3),
         torch.histc(torch.ones(0, dtype=getattr(torch, dtype)), 3))
    for bad in (lambda: ts.histc(ts.asarray([1, 2])), lambda: ts.histc(ts.ones(3), 0),
                lambda: ts.histc(ts.ones(3), 3, 2.0, 1.0)):
        with pytest.raises(RuntimeError, match="histc"):
            bad()


def test_cov_corrcoef_match_torch():
    a = rng.standard_normal((3, 6))
    fw = np.array([1, 2, 1, 3, 1, 2])
    aw = rng.random(6)
    for kwargs in ({}, {"correction": 0}, {"correction": 2}, {"fweights": fw},
                   {"aweights": aw}, {"fweights": fw, "aweights": aw, "correction": 0},
                   {"fweights": fw, "aweights": aw}):
        tk = {k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
              for k, v in kwargs.items()}
        sk = {k: ts.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        same(ts.cov(ts.asarray(a), **sk), torch.cov(torch.from_numpy(a), **tk), 1e-10)
        same(ts.asarray(a[0]).cov(**sk), torch.from_numpy(a[0]).cov(**tk), 1e-10)
    same(ts.corrcoef(ts.asarray(a)), torch.corrcoef(torch.from_numpy(a)), 1e-10)
    same(ts.asarray(a[1]).corrcoef(), torch.from_numpy(a[1]).corrcoef(), 1e-10)
    same(ts.cov(ts.asarray(np.arange(6).reshape(2, 3))),
         torch.cov(torch.arange(6).reshape(2, 3)))
    with pytest.raises(RuntimeError, match="cov"):
        ts.cov(ts.ones((2, 2, 2)))
    assert ts.Tensor.cov is ts.cov and ts.Tensor.corrcoef is ts.corrcoef
    compare_grads(lambda x: ts.cov(x, correction=0), lambda x: torch.cov(x, correction=0), [a])
    compare_grads(lambda x: ts.corrcoef(x), lambda x: torch.corrcoef(x), [a])


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_family_matches_torch(name):
    y = rng.standard_normal((3, 5))
    x1 = np.cumsum(rng.random(5))
    x2 = np.cumsum(rng.random((3, 5)), axis=1)
    f, g = getattr(ts, name), getattr(torch, name)
    T = torch.from_numpy
    same(f(ts.asarray(y)), g(T(y)), 1e-10)
    same(f(ts.asarray(y), dim=0), g(T(y), dim=0), 1e-10)
    same(f(ts.asarray(y), dx=0.5), g(T(y), dx=0.5), 1e-10)
    same(f(ts.asarray(y), ts.asarray(x1)), g(T(y), T(x1)), 1e-10)
    same(f(ts.asarray(y), ts.asarray(x2), dim=1), g(T(y), T(x2), dim=1), 1e-10)
    same(f(ts.asarray(np.arange(6).reshape(2, 3))), g(torch.arange(6).reshape(2, 3)))
    same(f(ts.ones((2, 0))), g(torch.ones(2, 0)))
    with pytest.raises(IndexError):
        f(ts.asarray(2.0))
    with pytest.raises(RuntimeError, match="one `x` value"):
        f(ts.asarray(y), ts.ones(4))
    compare_grads(lambda a: f(a, dx=0.25), lambda a: g(a, dx=0.25), [y])
