"""Differential tests of the reductions (sum, prod, mean, var, std, max, min, all, any,
count_nonzero, argmax, argmin) against NumPy, plus accuracy, determinism and error paths."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, arrays, assert_same, shapes, strided_views

REAL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES
SUM_DTYPES = ALL_DTYPES


@st.composite
def inputs(draw, dtypes, *, elements=None, nan=False, min_dims=0, max_dims=4, max_side=5):
    """(array, axis, keepdims): a possibly strided array and an axis spec valid for it."""
    dtype = draw(st.sampled_from(dtypes))
    if elements == "small":  # keeps products from overflowing
        elements = None if dtype == "bool" else st.integers(0 if dtype[0] == "u" else -2, 2)
    if nan and dtype.startswith("float"):
        elements = st.one_of(st.floats(-100, 100, width=16 if dtype == "float16" else 32),
                             st.just(float("nan")))
    a = draw(arrays(dtype, shapes(min_dims=min_dims, max_dims=max_dims, max_side=max_side),
                    elements=elements))
    a = strided_views(draw, a)
    nd = a.ndim
    kind = draw(st.sampled_from(["none", "int", "tuple"])) if nd else "none"
    if kind == "none":
        axis = None
    elif kind == "int":
        axis = draw(st.integers(-nd, nd - 1))
    else:
        picked = draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd))
        axis = tuple(d - nd if draw(st.booleans()) else d for d in picked)
    return a, axis, draw(st.booleans())


def _float_tol(a: np.ndarray, axis, want: np.ndarray):
    """Absolute tolerance for a float sum: a few ulps of the sum of magnitudes."""
    eps = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-14, "complex64": 1e-6,
           "complex128": 1e-14}.get(want.dtype.name, 0)
    mag = np.sum(np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)),
                 axis=axis)
    return eps * 8 * (float(np.max(mag)) if np.size(mag) else 0.0) + eps


@given(inputs(SUM_DTYPES))
def test_sum(case):
    a, axis, keep = case
    want = np.sum(a, axis=axis, keepdims=keep)
    got = ts.sum(ts.asarray(a), axis=axis, keepdims=keep)
    assert_same(got, want, atol=_float_tol(a, axis, want), rtol=1e-5)


@given(inputs(SUM_DTYPES, elements="small", max_dims=3, max_side=4))
def test_prod(case):
    a, axis, keep = case
    want = np.prod(a, axis=axis, keepdims=keep)
    got = ts.prod(ts.asarray(a), axis=axis, keepdims=keep)
    assert_same(got, want, rtol=1e-5 if a.dtype != np.float16 else 1e-2)


@given(inputs(SUM_DTYPES))
def test_mean(case):
    a, axis, keep = case
    with np.errstate(all="ignore"):
        want = np.mean(a, axis=axis, keepdims=keep)
    got = ts.mean(ts.asarray(a), axis=axis, keepdims=keep)
    if a.dtype.kind in "biu":  # integers average in float32 (the default float dtype)
        assert got.dtype == ts.float32
        want = want.astype(np.float32)
    assert_same(got, want, atol=_float_tol(a, axis, want), rtol=1e-5)


@given(inputs(["bool"] + INT_DTYPES + FLOAT_DTYPES), st.sampled_from([0, 1, 0.5]),
       st.sampled_from(["var", "std"]))
def test_var_std(case, correction, fn):
    a, axis, keep = case
    with np.errstate(all="ignore"):
        want = getattr(np, fn)(a.astype(np.float64), axis=axis, keepdims=keep, ddof=correction)
    got = getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep, correction=correction)
    wdt = a.dtype if a.dtype.kind == "f" else np.dtype(np.float32)
    assert got.dtype.name == wdt.name
    scale = float(np.max(np.abs(a.astype(np.float64)))) if a.size else 0.0
    tol = {"float16": 2e-3, "float32": 2e-5, "float64": 1e-10}[wdt.name]
    assert_same(got, want.astype(wdt), rtol=tol, atol=tol * (scale * scale + 1), check_dtype=False)




@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@given(inputs(REAL_DTYPES, nan=True), st.sampled_from(["max", "min"]))
def test_max_min(case, fn):
    a, axis, keep = case
    try:
        want = getattr(np, fn)(a, axis=axis, keepdims=keep)
    except ValueError:
        # over everything NumPy's ValueError; along given empty axes PyTorch's IndexError
        # "Expected reduction dim d to have non-zero size" (the standard names no class)
        with pytest.raises(ValueError if axis is None else IndexError, match=fn):
            getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep)
        return
    assert_same(getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep), want)


@given(inputs(ALL_DTYPES, elements=None), st.sampled_from(["all", "any", "count_nonzero"]))
def test_logical(case, fn):
    a, axis, keep = case
    if fn == "count_nonzero":
        want = np.asarray(np.count_nonzero(a, axis=axis, keepdims=keep)).astype(np.int64)
    else:
        want = getattr(np, fn)(a, axis=axis, keepdims=keep)
    assert_same(getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep), want)


@given(inputs(REAL_DTYPES, nan=True, elements=None), st.sampled_from(["argmax", "argmin"]))
def test_argmax_argmin(case, fn):
    a, axis, keep = case
    if isinstance(axis, tuple):
        axis = axis[0] if axis else None
    if a.ndim == 0 and axis is not None:
        axis = None
    try:
        want = getattr(np, fn)(a, axis=axis, keepdims=keep)
    except ValueError:
        # along a given empty axis PyTorch's IndexError, over everything NumPy's ValueError
        with pytest.raises(ValueError if axis is None else IndexError, match="empty|non-zero"):
            getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep)
        return
    assert_same(getattr(ts, fn)(ts.asarray(a), axis=axis, keepdims=keep), np.asarray(want))


def test_small_ints_argmax_ties_and_values():
    a = np.array([[3, 1, 3], [0, 0, -1]], dtype=np.int16)
    assert_same(ts.argmax(ts.asarray(a), axis=1), np.argmax(a, axis=1))
    assert_same(ts.argmin(ts.asarray(a)), np.asarray(np.argmin(a)))
    n = np.array([1.0, np.nan, 5.0, np.nan], dtype=np.float32)
    assert ts.argmax(ts.asarray(n)).item() == 1 and ts.argmin(ts.asarray(n)).item() == 1


@pytest.mark.parametrize("fn", ["sum", "prod", "max", "min", "all", "any", "count_nonzero",
                                "mean"])
def test_0d_axis_none_gives_0d(fn):
    x = ts.asarray(np.float32(2.5))
    r = getattr(ts, fn)(x)
    assert r.shape == ()
    assert getattr(ts, fn)(x, axis=()).shape == ()


def test_empty_reductions():
    e = ts.asarray(np.zeros((0, 3), np.float32))
    assert_same(ts.sum(e), np.float32(0))
    assert_same(ts.prod(e, axis=0), np.ones(3, np.float32))
    assert np.isnan(ts.mean(e).item())
    assert_same(ts.all(e), np.True_)
    assert_same(ts.any(e), np.False_)
    assert ts.max(e, axis=1).shape == (0,)
    for fn, word in [(ts.max, "maximum"), (ts.min, "minimum")]:
        with pytest.raises(ValueError, match=f"zero-size array to reduction operation {word}"):
            fn(e)
    with pytest.raises(ValueError, match="argmax"):
        ts.argmax(e)


def test_bfloat16_accumulates_in_float32():
    vals = np.full(4096, 1.0, np.float32)
    x = ts.asarray(vals).astype(ts.bfloat16)
    r = ts.sum(x)
    assert r.dtype == ts.bfloat16 and float(r) == 4096.0  # a bf16 running sum would stall at 256
    assert float(ts.mean(x)) == 1.0
    h = ts.asarray(vals).astype(ts.float16)
    assert float(ts.sum(h)) == 4096.0 and float(ts.mean(h)) == 1.0
    big = ts.asarray(np.full(1000, 60000.0, np.float16))
    assert float(ts.mean(big)) == 60000.0  # the float32 accumulator does not overflow


def test_float32_sum_accuracy():
    n = 1 << 24
    x = ts.asarray(np.full(n, 0.1, np.float32))
    got = float(ts.sum(x))
    want = n * float(np.float32(0.1))
    assert abs(got - want) / want < 1e-6
    # the same through the column (outer) path and the strided path
    m = ts.asarray(np.full((1 << 16, 32), 0.1, np.float32))
    col = ts.sum(m, axis=0).numpy()
    assert np.max(np.abs(col - (1 << 16) * float(np.float32(0.1)))) / ((1 << 16) * 0.1) < 1e-5


@pytest.mark.parametrize("shape,axis", [((1 << 21,), None), ((257, 3001), 0), ((3001, 257), 1),
                                        ((5, 1 << 18), 1), ((1 << 18, 3), 0), ((64, 64, 64), (0, 2))])
def test_thread_count_independence(shape, axis):
    rng = np.random.default_rng(0)
    a = ts.asarray(rng.standard_normal(shape).astype(np.float32))
    old = ts.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            ts.set_num_threads(n)
            results.append(ts.sum(a, axis=axis).numpy().tobytes())
            results.append(ts.mean(a, axis=axis).numpy().tobytes())
        assert results[0::2] == [results[0]] * 3 and results[1::2] == [results[1]] * 3
    finally:
        ts.set_num_threads(old)


def test_large_reductions_match_numpy():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2048, 2048)).astype(np.float32)
    t = ts.asarray(a)
    for axis in (0, 1, None):
        np.testing.assert_allclose(ts.sum(t, axis=axis).numpy(),
                                   np.sum(a.astype(np.float64), axis=axis), rtol=1e-4, atol=1e-3)
        assert_same(ts.max(t, axis=axis), np.max(a, axis=axis))
    a[1000, 7] = np.nan
    assert np.isnan(ts.max(ts.asarray(a)).item())
    assert np.isnan(ts.min(ts.asarray(a), axis=0).numpy()[7])
    assert ts.argmax(ts.asarray(a)).item() == 1000 * 2048 + 7


def test_transposed_and_negative_strides():
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    for v in (a.transpose(2, 0, 1), a[::-1, :, ::-2], a[:, ::-1].swapaxes(0, 2)):
        t = ts.asarray(v)
        for axis in (None, 0, 1, 2, (0, 2), (1, 2), (0, 1), -1):
            assert_same(ts.sum(t, axis=axis), np.sum(v, axis=axis))
            assert_same(ts.max(t, axis=axis, keepdims=True), np.max(v, axis=axis, keepdims=True))
        for axis in (None, 0, 1, 2):
            assert_same(ts.argmax(t, axis=axis), np.asarray(np.argmax(v, axis=axis)))
            assert_same(ts.argmin(t, axis=axis), np.asarray(np.argmin(v, axis=axis)))


def test_dtype_argument():
    a = np.arange(10, dtype=np.int8) * 20
    assert_same(ts.sum(ts.asarray(a), dtype=ts.int8), np.sum(a, dtype=np.int8))
    assert_same(ts.sum(ts.asarray(a), dtype=ts.float64), np.sum(a, dtype=np.float64))
    f = np.linspace(0, 1, 7, dtype=np.float32)
    assert_same(ts.prod(ts.asarray(f), dtype="float64"), np.prod(f, dtype=np.float64))


def test_torch_aliases_and_methods():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ts.asarray(a)
    assert_same(ts.sum(t, dim=1), a.sum(axis=1))
    assert_same(ts.sum(t, dim=(0, 2), keepdim=True), a.sum(axis=(0, 2), keepdims=True))
    assert_same(t.sum(1), a.sum(1))
    assert_same(t.mean(), np.mean(a))
    assert_same(t.max(dim=2).values, a.max(axis=2))  # methods follow torch: (values, indices)
    assert_same(t.min(0, keepdims=True).values, a.min(0, keepdims=True))
    assert_same(t.argmax(dim=1), a.argmax(axis=1))
    assert_same(t.argmin(), np.asarray(a.argmin()))
    assert_same(t.prod(2), a.prod(2))
    assert_same(t.var(correction=1), np.asarray(a.var(ddof=1)), rtol=1e-5)
    assert_same(t.std(0), a.std(0, ddof=1), rtol=1e-5)  # the method is unbiased like torch
    assert_same(t.all(), np.asarray(a.all()))
    assert_same(t.any(dim=0), a.any(axis=0))
    assert_same(t.count_nonzero(), np.asarray(np.count_nonzero(a), dtype=np.int64))
    assert_same(t.cumsum(1), np.cumsum(a, axis=1))
    with pytest.raises(TypeError, match="both axis= and its alias dim="):
        ts.sum(t, axis=0, dim=0)


@pytest.mark.parametrize("fn", ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any",
                                "count_nonzero"])
def test_axis_errors(fn):
    t = ts.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match=f"{fn}: axis 2 is out of bounds for a tensor of dimension 2"):
        getattr(ts, fn)(t, axis=2)
    with pytest.raises(IndexError, match=fn):
        getattr(ts, fn)(t, axis=(0, -3))
    with pytest.raises(ValueError, match=f"{fn}: duplicate axis"):
        getattr(ts, fn)(t, axis=(1, -1))


def test_dtype_errors():
    c = ts.asarray(np.ones(3, np.complex64))
    for fn in (ts.max, ts.min, ts.argmax, ts.argmin, ts.var, ts.std):
        with pytest.raises(TypeError, match="complex64"):
            fn(c)
    with pytest.raises(IndexError, match="argmax"):
        ts.argmax(ts.asarray(np.zeros((2, 2))), axis=5)


def test_broadcast_views_with_zero_strides():
    a = np.arange(40, dtype=np.float32).reshape(1, 40)
    for shape in ((64, 40), (3, 64, 40)):
        v = np.broadcast_to(a, shape)
        t = ts.broadcast_to(ts.asarray(a), shape)
        for axis in (None, 0, -1, (0, -1)):
            assert_same(ts.sum(t, axis=axis), np.sum(v, axis=axis))
            assert_same(ts.max(t, axis=axis), np.max(v, axis=axis))
        assert_same(ts.argmax(t, axis=0), np.argmax(v, axis=0))


# Note [Two-stage reductions]: reduced axes split by a kept one (a bias gradient's (0, 2, 3)
# of NCHW) reduce their inner part in place, then the partials; every reduction that goes
# through the shared path must agree with NumPy there, for contiguous, transposed and
# channels-last inputs, keepdims both ways, NaNs propagated and integer sums exact.
@pytest.mark.parametrize("shape,axes", [((16, 3, 5, 7), (0, 2, 3)), ((4, 5, 6, 7), (0, 2)),
                                        ((4, 5, 6, 7), (0, 3)), ((3, 1, 5, 2), (0, 2, 3)),
                                        ((2, 3, 4), (0, 2)), ((6, 5, 4), (2, 0)),
                                        ((2, 3, 0, 4), (0, 3)), ((2, 3, 4, 1), (0, 2, 3))])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
def test_reductions_over_axes_split_by_a_kept_axis(shape, axes, layout):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    t = ts.tensor(a)
    if layout == "transposed":
        perm = tuple(reversed(range(a.ndim)))
        a, t = a.transpose(perm), t.permute(*perm)
        axes = tuple(perm.index(d) for d in axes)
    elif layout == "channels_last" and a.ndim == 4:
        t = t.contiguous(memory_format=ts.channels_last)
    for name in ("sum", "mean", "max", "min", "prod", "var", "std"):
        if a.size == 0 and name in ("max", "min"):
            continue
        want = getattr(np, name)(a.astype(np.float64), axis=axes)
        got = getattr(ts, name)(t, axis=axes)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5, err_msg=name)
        kept = getattr(ts, name)(t, axis=axes, keepdims=True)
        assert kept.shape == np.sum(a, axis=axes, keepdims=True).shape
    b = a > 0.3
    tb = ts.tensor(b) if layout == "contiguous" else t > 0.3
    assert (ts.all(tb, axis=axes).numpy() == b.all(axis=axes)).all()
    assert (ts.any(tb, axis=axes).numpy() == b.any(axis=axes)).all()
    assert (ts.count_nonzero(tb, axis=axes).numpy() == np.count_nonzero(b, axis=axes)).all()
    ai = (a * 1000).astype(np.int32)
    assert (ts.sum(ts.tensor(ai), axis=axes).numpy() == ai.sum(axis=axes)).all()
    if a.size:
        an = a.copy()
        an.flat[a.size // 2] = np.nan
        got = ts.max(ts.tensor(an), axis=axes).numpy()
        assert (np.isnan(got) == np.isnan(np.max(an, axis=axes))).all()
