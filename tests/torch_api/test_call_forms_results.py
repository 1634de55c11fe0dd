"""Differential tests against PyTorch for torch-compatibility gaps: mean(dtype=), arange's
torch keywords and integer dtypes, unique with NaN, xlogy's weak scalars, unique_consecutive
of one slice, scatter_ reduce='multiply' and in-place identity, integer linspace, named-tuple
results, std/var with torch-only keywords, and the creation odds and ends (tensor of mixed
tensors, 0-d meshgrid, addbmm int32, fill overflow, empty median, *_like layouts)."""
import math

import numpy as np
import pytest

import tessera as ts
from harness import same_result

torch = pytest.importorskip("torch")


def _dt(name):
    return getattr(ts, name), getattr(torch, name)


# ---- 1. mean(dtype=)
@pytest.mark.parametrize("src", ["float32", "int64", "float16"])
@pytest.mark.parametrize("dst", ["float64", "float32"])
def test_mean_dtype(src, dst):
    a = np.arange(1, 7).reshape(2, 3) * 1.25
    x = ts.asarray(a, dtype=getattr(ts, src))
    t = torch.tensor(a, dtype=getattr(torch, src))
    same_result(x.mean(dtype=getattr(ts, dst)), t.mean(dtype=getattr(torch, dst)))
    same_result(ts.mean(x, 0, dtype=getattr(ts, dst)), torch.mean(t, 0, dtype=getattr(torch, dst)))
    same_result(ts.mean(x, 1, True, dtype=getattr(ts, dst)), torch.mean(t, 1, True, dtype=getattr(torch, dst)))
    same_result(x.mean(1, True, dtype=getattr(ts, dst)), t.mean(1, True, dtype=getattr(torch, dst)))
    same_result(ts.mean(x, dtype=getattr(ts, dst)), torch.mean(t, dtype=getattr(torch, dst)))


def test_mean_dtype_integer_raises_like_torch():
    with pytest.raises(RuntimeError):
        torch.tensor([1., 2.]).mean(dtype=torch.int64)
    with pytest.raises(RuntimeError):
        ts.asarray([1., 2.]).mean(dtype=ts.int64)


def test_mean_in_float64_differs_from_float32():
    # float32 rounding of the inputs vs the mean in float64 (the cast happens first)
    a = np.array([1e8, 1.0, -1e8, 3.0], dtype=np.float64)
    q = ts.asarray(a).mean(dtype=ts.float64)
    r = torch.tensor(a).mean(dtype=torch.float64)
    assert q.dtype == ts.float64 and float(q) == pytest.approx(float(r))


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "all", "any", "argmax", "argmin"])
def test_reduction_methods_take_positional_keepdim(name):
    a = np.array([[1., 2., 3.], [4., 0., 6.]], dtype=np.float32)
    same_result(getattr(ts.asarray(a), name)(1, True), getattr(torch.tensor(a), name)(1, True), rtol=0, atol=0)


# ---- 2. arange
@pytest.mark.parametrize("args,kwargs", [
    ((), {"start": 1, "end": 4}), ((), {"end": 4}), ((1,), {"end": 4, "step": 2}),
    ((1,), {"end": 7.5, "step": 2}), ((), {"end": 4.0}), ((), {"start": -2, "end": 3, "step": 1.5}),
])
def test_arange_torch_keywords(args, kwargs):
    same_result(ts.arange(*args, **kwargs), torch.arange(*args, **kwargs))


def test_arange_start_keyword_alone_raises_like_torch():
    with pytest.raises(TypeError):
        torch.arange(start=2)
    with pytest.raises(TypeError):
        ts.arange(start=2)


def test_arange_array_api_signature_kept():
    assert ts.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert ts.arange(1, 10, 3).tolist() == [1, 4, 7]
    assert ts.arange(2, stop=5).tolist() == [2, 3, 4]
    assert ts.arange(0, 1, 0.25, dtype=ts.float64).tolist() == [0, 0.25, 0.5, 0.75]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("args", [(0, 5, 2.5), (0.5, 5, 1.5), (0.7, 3.9), (5, 0, -1.5),
                                  (-3.7, 4.2, 1.3), (0, -5, -2.5), (1.5, 9.5, 2.0)])
def test_arange_float_args_integer_dtype(dtype, args):
    if dtype == "uint8" and any(a < 0 for a in args[:2]):
        pytest.skip("negative values in uint8")
    tsd, tod = _dt(dtype)
    same_result(ts.arange(*args, dtype=tsd), torch.arange(*args, dtype=tod), rtol=0, atol=0)


def test_arange_step_truncating_to_zero():
    with pytest.raises(ValueError):
        torch.arange(0, 1, 0.1, dtype=torch.int64)
    with pytest.raises(ValueError):
        ts.arange(0, 1, 0.1, dtype=ts.int64)
    # other integer dtypes: torch repeats trunc(start)
    same_result(ts.arange(0, 1, 0.1, dtype=ts.int32), torch.arange(0, 1, 0.1, dtype=torch.int32), rtol=0, atol=0)


# ---- 3. unique keeps NaNs apart
@pytest.mark.parametrize("sorted_", [True, False])
def test_unique_nan_distinct(sorted_):
    a = np.array([2., np.nan, 1., np.nan, 2., np.nan], dtype=np.float32)
    q = ts.unique(ts.asarray(a), sorted=sorted_, return_inverse=True, return_counts=True)
    r = torch.unique(torch.tensor(a), sorted=sorted_, return_inverse=True, return_counts=True)
    for u, v in zip(q, r):
        np.testing.assert_array_equal(np.asarray(u.tolist()), np.asarray(v.tolist()))
    assert ts.asarray(a).unique().shape == torch.tensor(a).unique().shape == (5,)


def test_unique_dim_nan_rows_distinct():
    a = np.array([[np.nan, 1.], [np.nan, 1.], [0., 1.]])
    q = ts.unique(ts.asarray(a), dim=0)
    r = torch.unique(torch.tensor(a), dim=0)
    assert q.shape == tuple(r.shape) == (3, 2)


# ---- 4. xlogy / xlog1py: weak scalars
@pytest.mark.parametrize("fn", ["xlogy", "xlog1py"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("other", [2.5, 2, True, np.float32(2.0), np.float64(3.0), np.int64(3)])
def test_xlogy_scalar_promotion(fn, dtype, other):
    vals = [1., 0., 2.5] if dtype != "bool" else [True, False, True]
    x = ts.asarray(vals, dtype=getattr(ts, dtype))
    t = torch.tensor(vals, dtype=getattr(torch, dtype))
    f_ts = ts.special.xlog1py if fn == "xlog1py" else ts.xlogy
    f_to = torch.special.xlog1py if fn == "xlog1py" else torch.xlogy
    same_result(f_ts(x, other), f_to(t, other)) if dtype != "float16" else None
    q, r = f_ts(other, x), f_to(other, t)
    assert str(q.dtype) == str(r.dtype).split(".")[-1]
    assert str(f_ts(x, other).dtype) == str(f_to(t, other).dtype).split(".")[-1]


def test_xlogy_tensor_pairs():
    a = ts.asarray([0., 1., 2.]), torch.tensor([0., 1., 2.])
    b = ts.asarray([3, 0, 2], dtype=ts.int32), torch.tensor([3, 0, 2], dtype=torch.int32)
    same_result(ts.xlogy(a[0], b[0]), torch.xlogy(a[1], b[1]))
    same_result(ts.xlogy(b[0], b[0]), torch.xlogy(b[1], b[1]))


# ---- 5. unique_consecutive with one slice
@pytest.mark.parametrize("shape,dim", [((1,), 0), ((1, 3), 0), ((2, 1), 1), ((3, 1), 0)])
def test_unique_consecutive_single_slice(shape, dim):
    a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    q = ts.unique_consecutive(ts.asarray(a), return_inverse=True, return_counts=True, dim=dim)
    r = torch.unique_consecutive(torch.tensor(a), return_inverse=True, return_counts=True, dim=dim)
    for u, v in zip(q, r):
        same_result(u, v, rtol=0, atol=0)


# ---- 6. scatter_ reduce='multiply' and in-place identity
@pytest.mark.parametrize("reduce", [None, "add", "multiply"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("scalar", [False, True])
def test_scatter_inplace_reduce(reduce, dtype, scalar):
    a = np.arange(1, 13).reshape(3, 4)
    idx = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
    src = np.arange(8).reshape(2, 4) + 2
    kw = {} if reduce is None else {"reduce": reduce}
    out = []
    for mod, mk in ((ts, ts.tensor), (torch, torch.tensor)):  # copies: a stays intact
        x = mk(a).to(getattr(mod, dtype)) if mod is torch else mk(a, dtype=getattr(ts, dtype))
        s = 3 if scalar else (mk(src).to(getattr(mod, dtype)) if mod is torch
                              else mk(src, dtype=getattr(ts, dtype)))
        y = x.scatter_(0, mk(idx), s, **kw)
        assert y is x
        out.append(x)
        if not scalar:
            out.append(mod.scatter(mk(a).to(x.dtype) if mod is torch else mk(a, dtype=x.dtype),
                                   0, mk(idx), s, **kw))
    if scalar:
        same_result(out[0], out[1], rtol=0, atol=0)
    else:
        same_result(out[0], out[2], rtol=0, atol=0)
        same_result(out[1], out[3], rtol=0, atol=0)


def test_scatter_value_keyword_and_scatter_add_return_self():
    x = ts.zeros((2, 3))
    assert x.scatter_(1, ts.asarray([[0], [2]]), value=5.0) is x
    t = torch.zeros((2, 3))
    t.scatter_(1, torch.tensor([[0], [2]]), value=5.0)
    same_result(x, t, rtol=0, atol=0)
    assert x.scatter_add_(0, ts.asarray([[1, 0, 1]]), ts.ones((1, 3))) is x
    t.scatter_add_(0, torch.tensor([[1, 0, 1]]), torch.ones((1, 3)))
    same_result(x, t, rtol=0, atol=0)


@pytest.mark.parametrize("name,args", [
    ("index_add_", lambda m: (0, m.asarray([0]) if m is ts else torch.tensor([0]),
                              (m.ones((1, 3))))),
    ("index_copy_", lambda m: (0, m.asarray([1]) if m is ts else torch.tensor([1]), m.ones((1, 3)))),
    ("index_fill_", lambda m: (0, m.asarray([0]) if m is ts else torch.tensor([0]), 2.0)),
    ("masked_fill_", lambda m: ((m.asarray if m is ts else torch.tensor)([[True, False, True]] * 2), 0.0)),
    ("masked_scatter_", lambda m: ((m.asarray if m is ts else torch.tensor)([[True, False, True]] * 2),
                                   m.ones((6,)))),
    ("put_", lambda m: ((m.asarray if m is ts else torch.tensor)([0, 4]),
                        (m.asarray if m is ts else torch.tensor)([9.0, 8.0]))),
    ("clamp_", lambda m: (1.5, 4.5)), ("clamp_min_", lambda m: (2.0,)), ("fill_", lambda m: (7.0,)),
    ("index_put_", lambda m: (((m.asarray if m is ts else torch.tensor)([1]),),
                              (m.asarray if m is ts else torch.tensor)(5.0))),
    ("zero_", lambda m: ()), ("add_", lambda m: (1.0,)), ("tril_", lambda m: ()),
    ("fill_diagonal_", lambda m: (0.0,)), ("nan_to_num_", lambda m: ()),
])
def test_inplace_methods_return_self(name, args):
    a = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    x, t = ts.asarray(a), torch.tensor(a)
    assert getattr(x, name)(*args(ts)) is x
    assert getattr(t, name)(*args(torch)) is t
    same_result(x, t, rtol=0, atol=0)


# ---- 7. integer linspace
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16"])
@pytest.mark.parametrize("args", [(0, 10, 5), (-10, 3, 7), (0, 100, 9), (3, -7, 4), (0, 1, 1),
                                  (2.7, 9.9, 4), (-2.7, 9.9, 5), (5, 5, 3), (0, 10, 0), (-3, 3, 2)])
def test_linspace_integer_dtype(dtype, args):
    tsd, tod = _dt(dtype)
    same_result(ts.linspace(*args, dtype=tsd), torch.linspace(*args, dtype=tod), rtol=0, atol=0)


def test_linspace_integer_torch_keywords():
    same_result(ts.linspace(start=-5, end=5, steps=4, dtype=ts.int64),
          torch.linspace(start=-5, end=5, steps=4, dtype=torch.int64), rtol=0, atol=0)


# ---- 8. named tuples
def _fields(r):
    return sorted(k for k in dir(r) if not k.startswith("_") and k not in
                  ("count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields"))


_A = np.array([[3., 1., 2.], [0.5, 4., 1.5], [2.5, 2., 7.]], dtype=np.float32)


@pytest.mark.parametrize("call", [
    lambda m, x: m.frexp(x), lambda m, x: x.frexp(), lambda m, x: x.svd(), lambda m, x: m.svd(x),
    lambda m, x: m.aminmax(x), lambda m, x: m.cummax(x, 0), lambda m, x: m.cummin(x, 0),
    lambda m, x: m.sort(x, 0), lambda m, x: m.topk(x, 2), lambda m, x: m.kthvalue(x, 1),
    lambda m, x: m.mode(x), lambda m, x: m.median(x, 0), lambda m, x: m.nanmedian(x, 0),
    lambda m, x: m.max(x, 0), lambda m, x: m.min(x, dim=1), lambda m, x: x.max(0),
    lambda m, x: m.histogram(x.flatten()), lambda m, x: m.slogdet(x), lambda m, x: m.qr(x),
    lambda m, x: m.linalg.eigh(x @ x.T), lambda m, x: m.linalg.lu_factor(x), lambda m, x: x.slogdet(),
])
def test_named_tuple_fields(call):
    q = call(ts, ts.asarray(_A))
    r = call(torch, torch.tensor(_A))
    assert _fields(q) == _fields(r)
    for f in _fields(r):
        np.testing.assert_allclose(np.asarray(getattr(q, f).tolist(), dtype=float),
                                   np.asarray(getattr(r, f).tolist(), dtype=float), rtol=1e-4, atol=1e-4)


def test_frexp_named_fields_values():
    a = np.array([0.0, 1.0, -3.5, 1e-3, 1024.0], dtype=np.float32)
    q, r = ts.frexp(ts.asarray(a)), torch.frexp(torch.tensor(a))
    same_result(q.mantissa, r.mantissa, rtol=0, atol=0)
    same_result(q.exponent, r.exponent, rtol=0, atol=0)
    assert type(q).__name__ == type(r).__name__ == "frexp"


# ---- 9. std / var with torch-only keywords
@pytest.mark.parametrize("fn", ["var", "std"])
@pytest.mark.parametrize("kw", [{"keepdim": True}, {"unbiased": True}, {"unbiased": False},
                                {"dim": 0, "unbiased": False}, {"correction": 0, "keepdim": True},
                                {"dim": 1, "keepdim": True}])
def test_std_var_torch_keywords(fn, kw):
    a = np.array([[1., 2., 5.], [3., 4., 9.]], dtype=np.float32)
    same_result(getattr(ts, fn)(ts.asarray(a), **kw), getattr(torch, fn)(torch.tensor(a), **kw))


def test_std_var_array_api_calls_unchanged():
    a = np.array([[1., 2., 5.], [3., 4., 9.]], dtype=np.float32)
    x = ts.asarray(a)
    assert float(ts.var(x)) == pytest.approx(np.var(a))
    np.testing.assert_allclose(np.asarray(ts.var(x, axis=0, correction=1, keepdims=True)),
                               np.var(a, axis=0, ddof=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ts.std(x, axis=1)), np.std(a, axis=1), rtol=1e-6)


# ---- 10. odds and ends
@pytest.mark.parametrize("make", [
    lambda m: [m.tensor(1), 2.5], lambda m: [m.tensor(1., dtype=m.float64), 2],
    lambda m: [m.tensor(1, dtype=m.int32), 2], lambda m: [m.tensor(1, dtype=m.int32), m.tensor(2, dtype=m.int8)],
    lambda m: [m.tensor(True), 2], lambda m: [m.tensor(1., dtype=m.float16), 2.5],
    lambda m: [m.tensor(1., dtype=m.float16), m.tensor(2., dtype=m.bfloat16)],
    lambda m: [m.tensor(1, dtype=m.uint8), m.tensor(1, dtype=m.int8)], lambda m: [m.tensor(1), 2],
])
def test_tensor_of_mixed_tensors_and_numbers(make):
    same_result(ts.tensor(make(ts)), torch.tensor(make(torch)), rtol=0, atol=0)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_zero_d(indexing):
    q = ts.meshgrid(ts.tensor(1.), ts.asarray([1., 2.]), ts.tensor(3.), indexing=indexing)
    r = torch.meshgrid(torch.tensor(1.), torch.tensor([1., 2.]), torch.tensor(3.), indexing=indexing)
    for u, v in zip(q, r):
        same_result(u, v, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_addbmm_keeps_dtype(dtype):
    tsd, tod = _dt(dtype)
    b = np.arange(12).reshape(3, 2, 2)
    q = ts.addbmm(ts.ones((2, 2), dtype=tsd), ts.asarray(b, dtype=tsd), ts.asarray(b, dtype=tsd))
    r = torch.addbmm(torch.ones((2, 2), dtype=tod), torch.tensor(b, dtype=tod), torch.tensor(b, dtype=tod))
    same_result(q, r, rtol=0, atol=0)


@pytest.mark.parametrize("dtype,value", [("int32", 2**40), ("int32", float("inf")), ("int32", 3e9),
                                         ("uint8", 256), ("int8", -129), ("float16", 1e6),
                                         ("int64", 2**63)])
def test_fill_overflow_raises(dtype, value):
    tsd, tod = _dt(dtype)
    with pytest.raises(RuntimeError):
        torch.full_like(torch.zeros(2, dtype=tod), value)
    with pytest.raises(RuntimeError):
        ts.full_like(ts.zeros(2, dtype=tsd), value)
    with pytest.raises(RuntimeError):
        ts.full((2,), value, dtype=tsd)


@pytest.mark.parametrize("dtype,value", [("int32", -2**31), ("uint8", -1), ("float16", float("inf")),
                                         ("bool", 5), ("int8", 127), ("int32", 2.5)])
def test_fill_in_range(dtype, value):
    tsd, tod = _dt(dtype)
    same_result(ts.full_like(ts.zeros(2, dtype=tsd), value), torch.full_like(torch.zeros(2, dtype=tod), value), rtol=0, atol=0)


@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32", "float64"])
def test_median_of_empty(fn, dtype):
    tsd, tod = _dt(dtype)
    q = getattr(ts, fn)(ts.zeros((0, 3), dtype=tsd))
    r = getattr(torch, fn)(torch.zeros((0, 3), dtype=tod))
    assert str(q.dtype) == str(r.dtype).split(".")[-1]
    if tsd in (ts.float32, ts.float64):
        assert math.isnan(float(q)) and math.isnan(float(r))
    else:
        assert int(q) == int(r)
    with pytest.raises(IndexError):
        getattr(torch, fn)(torch.zeros((0, 3), dtype=tod), 0)
    with pytest.raises(IndexError):
        getattr(ts, fn)(ts.zeros((0, 3), dtype=tsd), 0)


_VIEWS = [lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 1), lambda t: t[:, :, ::2],
          lambda t: t[:, ::2].transpose(0, 2), lambda t: t, lambda t: t[:, :1].transpose(1, 2),
          lambda t: t.transpose(1, 2)[..., 1:], lambda t: t[0].T]


@pytest.mark.parametrize("view", range(len(_VIEWS)))
@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like",
                                "full_like"])
def test_like_preserves_layout(view, fn):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x, t = _VIEWS[view](ts.asarray(a)), _VIEWS[view](torch.tensor(a))
    args = (2.5,) if fn == "full_like" else ()
    q, r = getattr(ts, fn)(x, *args), getattr(torch, fn)(t, *args)
    assert tuple(q.shape) == tuple(r.shape)
    assert q.stride() == r.stride()
    if fn in ("zeros_like", "ones_like", "full_like"):
        same_result(q, r, rtol=0, atol=0)
    q[...] = ts.asarray(np.asarray(x.tolist()))  # writable and dense: every element its own
    np.testing.assert_array_equal(np.asarray(q.tolist()), np.asarray(t.tolist()))


@pytest.mark.parametrize("right", [False, True])
def test_batched_searchsorted_with_sorter_matches_torch(right):
    rng = np.random.default_rng(3)
    seq = rng.integers(0, 10, (2, 3, 5)).astype(np.float64)
    vals = rng.integers(0, 10, (2, 3, 4)).astype(np.float64)
    want = torch.searchsorted(torch.tensor(seq), torch.tensor(vals),
                              sorter=torch.argsort(torch.tensor(seq), stable=True), right=right)
    got = ts.searchsorted(ts.asarray(seq), ts.asarray(vals),
                          sorter=ts.argsort(ts.asarray(seq), stable=True), right=right)
    assert got.tolist() == want.tolist()
