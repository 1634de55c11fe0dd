"""Elementwise functions and Tensor operators: differential tests against NumPy (every
function, every supported dtype, broadcasting, 0-d/empty, strided inputs), the standard's
special cases, integer floor semantics, bfloat16, operators, errors, and a few vs PyTorch."""
import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import errors
from harness import (ALL_DTYPES, COMPLEX_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMERIC_DTYPES,
                     arrays, assert_same, check, check_torch, compare_grads, shapes,
                     strided_views)

REAL_DTYPES = INT_DTYPES + FLOAT_DTYPES
# The function x dtype grids hold hundreds of tests: fewer examples each keeps the file fast
# while the grid as a whole still sees many shapes and layouts.
GRID_EXAMPLES = 6
INEXACT = FLOAT_DTYPES + COMPLEX_DTYPES


def _quiet(fn):
    """NumPy warns on x // 0, log(0), overflow...; the values are what is compared."""
    def wrapped(m, *args):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m, *args)
    return wrapped


def _as_float32_for_numpy(a: np.ndarray) -> np.ndarray:
    """tessera computes float-only functions of integers/booleans in float32 (PyTorch's rule)."""
    return a if a.dtype.kind in "fc" else a.astype(np.float32)


def _elements(dtype: str, small_complex: bool = False, specials: bool = False):
    if dtype.startswith("float"):
        return st.floats(-100, 100, width=16 if dtype == "float16" else 32,
                         allow_nan=specials or None, allow_infinity=specials or None) \
            if not specials else st.floats(width=16 if dtype == "float16" else 32)
    if dtype.startswith("complex"):
        mag = 5 if small_complex else 100
        return st.complex_numbers(max_magnitude=mag, allow_nan=False, allow_infinity=False,
                                  width=64 if dtype == "complex64" else 128)
    return None


@st.composite
def operand(draw, dtype: str, shape=None, **kw):
    """An array of `dtype`, sometimes a transposed / negative-step / strided view."""
    a = draw(arrays(dtype, shape if shape is not None else shapes(), elements=_elements(dtype, **kw)))
    return strided_views(draw, a)


@st.composite
def operand_pair(draw, dtype: str, dtype2=None, **kw):
    """Two arrays whose shapes broadcast together (one may have fewer dims or size-1 dims)."""
    shape = draw(shapes(max_dims=3))
    a = draw(operand(dtype, shape, **kw))
    sub = list(shape[len(shape) - draw(st.integers(0, len(shape))):])
    sub = [1 if draw(st.booleans()) else s for s in sub]
    b = draw(operand(dtype2 or dtype, tuple(sub), **kw))
    return (a, b) if draw(st.booleans()) else (b, a)


# ---- unary float functions (integers and bool compute in float32)
UNARY_FLOAT = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "sin", "sinh",
               "tan", "tanh", "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
               "reciprocal"]


@pytest.mark.parametrize("name", UNARY_FLOAT)
@pytest.mark.parametrize("dtype", INEXACT + ["int16", "uint8", "bool"])
@settings(max_examples=GRID_EXAMPLES)
@given(data=st.data())
def test_unary_float_functions(name, dtype, data):
    a = data.draw(operand(dtype, small_complex=True))
    want = _quiet(lambda m, x: getattr(m, name)(x))(np, _as_float32_for_numpy(a))
    got = getattr(ts, name)(ts.asarray(a))
    # complex64 via libstdc++ vs NumPy's own: a few ulp apart near cancellation
    tol = {"complex64": dict(rtol=2e-5, atol=2e-5), "complex128": dict(rtol=1e-12, atol=1e-12)}
    assert_same(got, want, **tol.get(dtype, {}))


# ---- binary real-float functions
BINARY_FLOAT = ["atan2", "hypot", "logaddexp", "copysign", "nextafter", "divide"]


@pytest.mark.parametrize("name", BINARY_FLOAT)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@settings(max_examples=2 * GRID_EXAMPLES)
@given(data=st.data())
def test_binary_float_functions(name, dtype, data):
    a, b = data.draw(operand_pair(dtype))
    exact = dict(rtol=0, atol=0) if name in ("copysign", "nextafter") else {}
    check(_quiet(lambda m, x, y: getattr(m, name)(x, y)), a, b, **exact)


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "copysign", "divide"])
def test_binary_float_functions_of_integers_compute_in_float32(name):
    a = np.array([[-3, 0, 2, 7]], dtype=np.int16)
    b = np.array([[1], [-2]], dtype=np.int32)
    got = getattr(ts, name)(ts.asarray(a), ts.asarray(b))
    want = getattr(np, name)(a.astype(np.float32), b.astype(np.float32))
    assert_same(got, want)


# ---- arithmetic, comparisons, min/max, logical on every dtype
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "equal", "not_equal", "less",
                                  "less_equal", "greater", "greater_equal", "maximum", "minimum",
                                  "logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@settings(max_examples=GRID_EXAMPLES)
@given(data=st.data())
def test_binary_all_dtypes(name, dtype, data):
    ordered = name in ("less", "less_equal", "greater", "greater_equal", "maximum", "minimum")
    if (ordered and dtype.startswith("complex")) or (name in ("subtract",) and dtype == "bool") \
            or (name in ("maximum", "minimum") and dtype == "bool"):
        a = np.ones(2, dtype)
        with pytest.raises(TypeError, match=name):
            getattr(ts, name)(ts.asarray(a), ts.asarray(a))
        return
    if dtype in ("int64", "uint64") and name in ("add", "subtract", "multiply"):
        return _full_range_wrapping(name, dtype, data)
    a, b = data.draw(operand_pair(dtype))
    check(_quiet(lambda m, x, y: getattr(m, name)(x, y)), a, b)


def _full_range_wrapping(name, dtype, data):
    a, b = data.draw(operand_pair(dtype))
    check(_quiet(lambda m, x, y: getattr(m, name)(x, y)), a, b, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["abs", "negative", "positive", "square", "sign", "logical_not",
                                  "isfinite", "isinf", "isnan", "signbit", "ceil", "floor",
                                  "trunc", "round", "bitwise_invert", "real", "imag", "conj"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@settings(max_examples=GRID_EXAMPLES)
@given(data=st.data())
def test_unary_dtype_preserving(name, dtype, data):
    allowed = {
        "abs": NUMERIC_DTYPES, "negative": NUMERIC_DTYPES, "positive": NUMERIC_DTYPES,
        "square": NUMERIC_DTYPES, "sign": NUMERIC_DTYPES, "logical_not": ALL_DTYPES,
        "isfinite": ALL_DTYPES, "isinf": ALL_DTYPES, "isnan": ALL_DTYPES,
        "signbit": REAL_DTYPES, "ceil": REAL_DTYPES, "floor": REAL_DTYPES, "trunc": REAL_DTYPES,
        "round": NUMERIC_DTYPES, "bitwise_invert": INT_DTYPES + ["bool"],
        "real": NUMERIC_DTYPES, "imag": NUMERIC_DTYPES, "conj": NUMERIC_DTYPES,
    }[name]
    if dtype not in allowed:
        with pytest.raises(TypeError, match=name):
            getattr(ts, name)(ts.asarray(np.ones(2, dtype)))
        return
    a = data.draw(operand(dtype, specials=name in ("isfinite", "isinf", "isnan", "signbit",
                                                    "sign", "abs", "round", "floor")))
    np_name = {"bitwise_invert": "invert"}.get(name, name)
    if name == "sign" and dtype.startswith("complex"):
        w = a.astype(np.complex128)  # so |z| of a subnormal complex64 doesn't underflow
        with np.errstate(all="ignore"):
            want = np.where(w == 0, 0, w / np.abs(w)).astype(dtype)
        assert_same(ts.sign(ts.asarray(a)), want)
        return
    check(_quiet(lambda m, x: getattr(m, np_name if m is np else name)(x)), a)


# ---- integers: floor semantics, division by zero, wrapping, shifts, powers
@pytest.mark.parametrize("name", ["floor_divide", "remainder", "bitwise_and", "bitwise_or",
                                  "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
@settings(max_examples=GRID_EXAMPLES)
@given(data=st.data())
def test_integer_binary(name, dtype, data):
    if dtype == "bool" and name not in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        with pytest.raises(TypeError, match=name):
            getattr(ts, name)(ts.asarray(np.ones(2, bool)), ts.asarray(np.ones(2, bool)))
        return
    a, b = data.draw(operand_pair(dtype))
    if name in ("floor_divide", "remainder") and (np.asarray(b) == 0).any():
        # a zero integer divisor raises PyTorch's ZeroDivisionError (NumPy gives 0) unless
        # the result is empty
        if np.broadcast(np.asarray(a), np.asarray(b)).size:
            with pytest.raises(errors.ZeroDivisionError, match=name):
                getattr(ts, name)(ts.asarray(a), ts.asarray(b))
        b = np.where(np.asarray(b) == 0, 1, b).astype(np.asarray(b).dtype)
    np_name = {"bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}.get(name, name)
    check(_quiet(lambda m, x, y: getattr(m, np_name if m is np else name)(x, y)), a, b)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_division_edge_cases(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, -7, 7, -7, 7, 0, info.max, 5], dtype)
    b = np.array([-1, 1, 2, -2, -2, 2, 3, -1, 4], dtype)
    for name in ("floor_divide", "remainder"):
        check(_quiet(lambda m, x, y: getattr(m, name)(x, y)), a, b)
        with pytest.raises(errors.ZeroDivisionError, match=name):  # as PyTorch
            getattr(ts, name)(ts.asarray(a), ts.asarray(b * 0))
    # the operator forms too, and Python's own semantics on the small cases
    x, y = ts.asarray(a[2:6]), ts.asarray(b[2:6])
    assert (x // y).tolist() == [int(p) // int(q) for p, q in zip(a[2:6], b[2:6])]
    assert (x % y).tolist() == [int(p) % int(q) for p, q in zip(a[2:6], b[2:6])]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts_by_bit_width_and_more(dtype):
    bits = np.dtype(dtype).itemsize * 8
    a = np.array([1, 3, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
    for s in [0, 1, bits - 1, bits, bits + 1, 100]:
        if s > np.iinfo(dtype).max:
            continue
        b = np.full(4, s, dtype)
        check(lambda m, x, y: m.left_shift(x, y) if m is np else m.bitwise_left_shift(x, y), a, b)
        check(lambda m, x, y: m.right_shift(x, y) if m is np else m.bitwise_right_shift(x, y), a, b)
    if dtype.startswith("int"):
        neg = ts.bitwise_right_shift(ts.asarray(np.array([-5], dtype)), bits + 3)
        assert neg.tolist() == [-1]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@given(data=st.data())
def test_integer_pow_wraps(dtype, data):
    a = data.draw(operand(dtype))
    e = data.draw(arrays(dtype, a.shape, elements=st.integers(0, 70)))
    check(lambda m, x, y: m.pow(x, y), a, e)


def test_integer_negative_powers_raise_like_numpy():
    x = ts.asarray(np.array([2, 3], np.int32))
    with pytest.raises(ValueError, match="pow: integers to negative"):
        ts.pow(x, ts.asarray(np.array([1, -1], np.int32)))
    with pytest.raises(ValueError):
        x ** -1
    with pytest.raises(ValueError):
        2 ** ts.asarray(np.array([-2], np.int64))
    with pytest.raises(ValueError):
        x **= -2
    assert (x ** 2).tolist() == [4, 9]
    assert ts.pow(ts.asarray(np.array([2], np.uint8)), 3).tolist() == [8]
    assert (x ** -1.0).dtype == ts.float32  # a float exponent promotes


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
@given(data=st.data())
def test_pow(dtype, data):
    if dtype in INT_DTYPES:
        return  # test_integer_pow_wraps
    a, b = data.draw(operand_pair(dtype, small_complex=True))
    if dtype.startswith("complex"):
        b = b.real.round().astype(dtype) if data.draw(st.booleans()) else b
        # Overflow to infinity has no agreed complex form (NumPy gives inf+nanj, we inf+0j):
        # keep bases away from 0 so |a|**b stays finite.
        a = np.where(np.abs(a) < 1e-3, a + 1, a).astype(dtype)
    check(_quiet(lambda m, x, y: m.pow(x, y)), a, b, **({"rtol": 1e-4, "atol": 1e-4}
                                                        if dtype == "complex64" else {}))


# ---- special cases: NaN, +-inf, +-0 against NumPy (values and signs of zeros)
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.5, 1e-30, 1e30,
            3.0, -7.0]


def _same_with_signs(got: ts.Tensor, want: np.ndarray, **tol):
    assert_same(got, want, **tol)
    g = got.numpy()
    zero = (want == 0) & (g == 0)
    np.testing.assert_array_equal(np.signbit(g[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UNARY_FLOAT + ["abs", "sign", "ceil", "floor", "trunc",
                                                 "round", "square", "negative", "positive"])
def test_unary_special_cases(name, dtype):
    a = np.array(SPECIALS, dtype)
    want = _quiet(lambda m, x: getattr(m, name)(x))(np, a)
    _same_with_signs(getattr(ts, name)(ts.asarray(a)), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "copysign", "nextafter", "pow",
                                  "floor_divide", "remainder", "maximum", "minimum", "add",
                                  "subtract", "multiply", "divide"])
def test_binary_special_cases(name, dtype):
    a = np.array(SPECIALS, dtype)[:, None]
    b = np.array(SPECIALS, dtype)[None, :]
    want = _quiet(lambda m, x, y: getattr(m, name)(x, y))(np, a, b)
    if name == "floor_divide":  # the standard's floor(x1 / x2) where one operand is infinite
        # (NumPy follows Python's divmod there; Note [Floor division by infinity])
        aa, bb = np.broadcast_arrays(a, b)
        finite_nz = lambda v: np.isfinite(v) & (v != 0)  # noqa: E731
        want = np.where(np.isinf(aa) & finite_nz(bb), _quiet(np.divide)(aa, bb), want)
        want = np.where(finite_nz(aa) & np.isinf(bb), _quiet(np.divide)(aa, bb), want)
    _same_with_signs(getattr(ts, name)(ts.asarray(a), ts.asarray(b)), want)


COMPLEX_SPECIAL_PARTS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0, 0.5]


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
                                  "tanh", "asinh", "atanh", "acos", "asin", "acosh", "atan",
                                  "expm1", "log1p", "log2", "log10", "abs", "sign", "round",
                                  "isnan", "isinf", "isfinite", "square"])
def test_complex_special_cases(name):
    # (reciprocal is left out: the standard defines it as 1 / z, whose special cases C99
    # Annex G leaves partly open, e.g. 1 / 0 is "an infinity"; NumPy gives nan+nanj.)
    re, im = np.meshgrid(COMPLEX_SPECIAL_PARTS, COMPLEX_SPECIAL_PARTS)
    z = (re + 1j * im).astype(np.complex128).ravel()
    # avoid the representation in `re + 1j*im` turning (inf, 0) into (inf, nan)
    z.real, z.imag = re.ravel(), im.ravel()
    got = getattr(ts, name)(ts.asarray(z)).numpy()
    if name == "sign":
        with np.errstate(all="ignore"):
            want = np.where(z == 0, 0, z / np.abs(z))
    elif name == "expm1":  # the standard's table is exp's C99 values minus 1; NumPy's isn't
        with np.errstate(all="ignore"):
            want = np.where(np.isfinite(z), np.expm1(z), np.exp(z) - 1)
    else:
        want = _quiet(lambda m, x: getattr(m, name)(x))(np, z)
    if got.dtype.kind != "c":
        np.testing.assert_array_equal(got, want)
        return
    # Where a part is NaN, the standard leaves the other part's value (and NaN's sign) open;
    # finite and infinite parts must agree exactly.
    for part in (np.real, np.imag):
        g, w = part(got), part(want)
        both_nan = np.isnan(g) & np.isnan(w)
        nan_row = np.isnan(got.real) | np.isnan(got.imag) | np.isnan(want.real) | np.isnan(want.imag)
        keep = ~both_nan & ~nan_row
        np.testing.assert_allclose(g[keep], w[keep], rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(np.isnan(got.real) | np.isnan(got.imag),
                                  np.isnan(want.real) | np.isnan(want.imag))


def test_round_half_to_even():
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49999, 1e20], np.float64)
    assert_same(ts.round(ts.asarray(a)), np.round(a))
    check_torch(lambda m, x: m.round(x), a.astype(np.float32))
    assert_same(ts.round(ts.asarray(np.array([2.5 + 3.5j]))), np.array([2 + 4j]))


def test_abs_complex_is_real_and_int_min_wraps():
    z = ts.asarray(np.array([3 + 4j, -0.0 - 5j], np.complex64))
    assert ts.abs(z).dtype == ts.float32 and ts.abs(z).tolist() == [5.0, 5.0]
    assert ts.real(z).dtype == ts.float32 and ts.imag(z).tolist() == [4.0, -5.0]
    assert ts.abs(ts.asarray(np.array([-128], np.int8))).tolist() == [-128]
    assert ts.real(ts.asarray(np.array([1.5]))).tolist() == [1.5]
    assert ts.imag(ts.asarray(np.array([1, 2], np.int16))).tolist() == [0, 0]


# ---- clip
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float16", "float32", "float64"])
@given(data=st.data())
def test_clip(dtype, data):
    x = data.draw(operand(dtype))
    lo = data.draw(st.one_of(st.none(), st.integers(-50, 50),
                             arrays(dtype, st.just(x.shape[len(x.shape) - 1:]))))
    hi = data.draw(st.one_of(st.none(), st.integers(-50, 50),
                             arrays(dtype, st.just(x.shape[len(x.shape) - 1:]))))
    if dtype.startswith("uint"):
        lo = abs(lo) if isinstance(lo, int) else lo
        hi = abs(hi) if isinstance(hi, int) else hi
    conv = (lambda v: ts.asarray(v) if isinstance(v, np.ndarray) else v)
    got = ts.clip(ts.asarray(x), min=conv(lo), max=conv(hi))
    if lo is None and hi is None:
        want = x.copy()
    else:
        want = np.clip(x, lo, hi).astype(dtype)  # where lo > hi this is hi, as ours
    assert_same(got, want)
    assert_same(ts.asarray(x).clamp(conv(lo), conv(hi)), want)


def test_clip_nan_and_errors():
    x = ts.asarray(np.array([np.nan, 1.0, 5.0]))
    assert_same(ts.clip(x, 2.0, 3.0), np.array([np.nan, 2.0, 3.0]))
    assert_same(ts.clip(x, ts.asarray(np.array([np.nan, 0, 0])), 3), np.array([np.nan, 1.0, 3.0]))
    with pytest.raises(ValueError, match="clip"):
        ts.clip(x, ts.asarray(np.zeros((2,))))
    with pytest.raises(TypeError, match="clip"):
        ts.clip(ts.asarray(np.array([1j])), 0)


@st.composite
def _clip_shapes(draw):
    """x's shape and bound shapes that broadcast with it, some of them growing it."""
    base = draw(shapes(max_dims=3, min_side=1, max_side=3))  # torch's backward fails on empty
    grow = draw(st.lists(st.integers(1, 3), max_size=2))
    lo = tuple(grow) + tuple(draw(st.sampled_from([1, s])) for s in base)
    hi = tuple(draw(st.sampled_from([1, s])) for s in base)[draw(st.integers(0, len(base))):]
    return base, lo, hi


@given(shapes3=_clip_shapes(), data=st.data())
def test_clip_bounds_grow_the_shape(shapes3, data):
    # The standard's clip broadcasts x, min and max together (array_api_strict gives the
    # broadcast shape), and so does torch.clamp; only the in-place clamp_ may not grow x.
    import array_api_strict as xps
    import torch
    xs, ls, hs = shapes3
    x, lo, hi = (data.draw(arrays("float64", st.just(s), elements=st.floats(a, b)))
                 for s, (a, b) in zip((xs, ls, hs), [(-5, 5), (-5, -0.5), (0.5, 5)]))
    want = np.clip(x, lo, hi)
    assert_same(ts.clip(ts.asarray(x), min=ts.asarray(lo), max=ts.asarray(hi)), want)
    strict = xps.clip(xps.asarray(x), min=xps.asarray(lo), max=xps.asarray(hi))
    assert tuple(strict.shape) == want.shape
    # torch's ClampBackward cannot grow x's gradient, so torch sees x expanded first.
    compare_grads(lambda a, l, h: ts.clamp(a, l, h),
                  lambda a, l, h: torch.clamp(a.expand(want.shape), l, h), [x, lo, hi])
    if np.broadcast_shapes(x.shape, lo.shape) != x.shape:
        with pytest.raises(RuntimeError, match="clamp_"):
            ts.asarray(x).clamp_(ts.asarray(lo))


def test_log1p_complex_far_from_and_near_zero():
    # |1 + z| overflows double well before log|1 + z| does; near 0 the real part keeps its
    # digits (log|1 + z| = log1p(x(2 + x) + y^2) / 2). Against torch's complex128 log1p.
    import torch
    parts = [1e308, -1e308, 1.7e308, 1e200, 3.0, 0.3, -0.4, 1e-10, -1e-300, 0.0, -1.0, -2.0]
    z = np.array([complex(a, b) for a in parts for b in parts], np.complex128)
    got = ts.log1p(ts.asarray(z)).numpy()
    want = torch.log1p(torch.tensor(z)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    parts = [3e38, -3e38, 1e30, 3.0, 0.3, -0.4, 1e-7, -1e-30, 0.0, -1.0, -2.0]
    z = np.array([complex(a, b) for a in parts for b in parts], np.complex128)
    got32 = ts.log1p(ts.asarray(z.astype(np.complex64))).numpy()
    want32 = torch.log1p(torch.tensor(z.astype(np.complex64))).numpy()
    np.testing.assert_allclose(got32, want32, rtol=2e-6, atol=0)


# ---- bfloat16 against ml_dtypes (computed in float32, rounded once)
@pytest.mark.parametrize("name", ["exp", "tanh", "sin", "sqrt", "log1p", "abs", "floor", "round",
                                  "add", "multiply", "divide", "maximum", "atan2", "pow",
                                  "floor_divide", "remainder", "nextafter", "less"])
@settings(max_examples=2 * GRID_EXAMPLES)
@given(data=st.data())
def test_bfloat16(name, data):
    a, b = data.draw(operand_pair("float32"))
    a16, b16 = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    fn = getattr(np, name)
    binary = name in ("add", "multiply", "divide", "maximum", "atan2", "pow", "floor_divide",
                      "remainder", "nextafter", "less")
    with np.errstate(all="ignore"):
        if name == "nextafter":
            want = np.nextafter(a16, b16)  # ml_dtypes steps in bfloat16
        else:
            ref = fn(a16.astype(np.float32), b16.astype(np.float32)) if binary \
                else fn(a16.astype(np.float32))
            want = ref if ref.dtype == bool else ref.astype(ml_dtypes.bfloat16)
    args = (ts.asarray(a16), ts.asarray(b16)) if binary else (ts.asarray(a16),)
    got = getattr(ts, name)(*args)
    assert got.dtype == (ts.bool if want.dtype == bool else ts.bfloat16)
    g, w = np.asarray(got.numpy()), np.asarray(want)
    if w.dtype != bool:
        g, w = g.astype(np.float32), w.astype(np.float32)
    # exp/tanh use a float32 polynomial within 3 ulp, so rounding to bfloat16 may differ by 1 ulp
    tol = dict(rtol=2 ** -7, atol=0) if name in ("exp", "tanh") else dict(rtol=0, atol=0)
    np.testing.assert_allclose(g, w, equal_nan=True, **tol)


# ---- accuracy of the vectorized float32 exp and tanh against float64
def _ulp_error(got32: np.ndarray, exact64: np.ndarray) -> float:
    want32 = exact64.astype(np.float32)
    ok = np.isfinite(want32) & (want32 != 0)
    spacing = np.spacing(np.abs(want32[ok])).astype(np.float64)
    return float(np.max(np.abs(got32[ok].astype(np.float64) - exact64[ok]) / spacing))


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_fast_float32_accuracy(name):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-104, 89, 400_000), rng.uniform(-1, 1, 200_000),
                        rng.standard_normal(200_000) * 1e-3, np.linspace(-10, 10, 100_001),
                        np.linspace(0.6, 0.65, 10_001)]).astype(np.float32)
    got = getattr(ts, name)(ts.asarray(x)).numpy()
    exact = getattr(np, name)(x.astype(np.float64))
    assert _ulp_error(got, exact) <= (2.0 if name == "exp" else 3.0)
    # the strided path (gathered through the same vectorized loop) agrees bit for bit
    strided = getattr(ts, name)(ts.asarray(x[::-3])).numpy()
    np.testing.assert_array_equal(strided, got[::-3])
    # subnormal results and the edges
    if name == "exp":
        edge = np.array([-87.5, -100.0, -103.9, -104.5, 88.7, 88.73, 89.0, -np.inf, np.inf, np.nan],
                        np.float32)
        with np.errstate(all="ignore"):
            want = np.exp(edge.astype(np.float64)).astype(np.float32)
        g = ts.exp(ts.asarray(edge)).numpy()
        np.testing.assert_allclose(g, want, rtol=3e-7, atol=2e-45, equal_nan=True)


def test_thread_count_does_not_change_results():
    rng = np.random.default_rng(1)
    x = ts.asarray(rng.standard_normal(300_001).astype(np.float32))
    y = ts.asarray(rng.standard_normal(300_001).astype(np.float32))
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        one = [f().numpy() for f in (lambda: ts.exp(x), lambda: ts.tanh(x), lambda: x * y + 1,
                                     lambda: ts.logaddexp(x, y))]
        ts.set_num_threads(max(2, n))
        many = [f().numpy() for f in (lambda: ts.exp(x), lambda: ts.tanh(x), lambda: x * y + 1,
                                      lambda: ts.logaddexp(x, y))]
    finally:
        ts.set_num_threads(n)
    for p, q in zip(one, many):
        np.testing.assert_array_equal(p, q)


# ---- operators
OPERATORS = [("__add__", "add"), ("__sub__", "subtract"), ("__mul__", "multiply"),
             ("__truediv__", "divide"), ("__floordiv__", "floor_divide"), ("__mod__", "remainder"),
             ("__pow__", "pow"), ("__and__", "bitwise_and"), ("__or__", "bitwise_or"),
             ("__xor__", "bitwise_xor"), ("__lshift__", "bitwise_left_shift"),
             ("__rshift__", "bitwise_right_shift")]


@pytest.mark.parametrize("op, name", OPERATORS)
def test_operators_and_reflected_forms(op, name):
    a = np.array([[5, 7, 12]], np.int32)
    b = np.array([[1], [2]], np.int32)
    ta, tb = ts.asarray(a), ts.asarray(b)
    fn = getattr(ts, name)
    assert_same(getattr(ta, op)(tb), fn(ta, tb))
    assert_same(getattr(ta, op)(3), fn(ta, 3))
    rop = "__r" + op[2:]
    assert_same(getattr(ta, rop)(3), fn(3, ta))
    # Python-level syntax reaches the same methods, scalar on either side
    assert_same(eval(f"3 {_SYMBOL[op]} ta"), fn(3, ta))
    assert_same(eval(f"ta {_SYMBOL[op]} 2"), fn(ta, 2))


_SYMBOL = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/", "__floordiv__": "//",
           "__mod__": "%", "__pow__": "**", "__and__": "&", "__or__": "|", "__xor__": "^",
           "__lshift__": "<<", "__rshift__": ">>"}


@pytest.mark.parametrize("op", ["+", "-", "*", "//", "%", "**", "&", "|", "^", "<<", ">>"])
def test_inplace_operators_write_through_views(op):
    base = np.arange(1, 13, dtype=np.int64).reshape(3, 4)
    want = base.copy()
    view_np = want[:, ::-2]
    exec(f"view_np {op}= 3")
    t_base = np.arange(1, 13, dtype=np.int64).reshape(3, 4)
    v = ts.asarray(t_base[:, ::-2])  # shares t_base's memory
    before = id(v)
    ns = {"v": v}
    exec(f"v {op}= 3", ns)
    assert id(ns["v"]) == before
    np.testing.assert_array_equal(t_base, want)


def test_inplace_true_division_and_casting_rules():
    x = ts.asarray(np.arange(4.0, dtype=np.float32))
    x /= 2
    assert x.tolist() == [0.0, 0.5, 1.0, 1.5]
    i = ts.asarray(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="in-place"):
        i /= 2
    with pytest.raises(ValueError, match="in-place"):
        i += ts.asarray(np.zeros((2, 4), np.int32))
    m = ts.asarray(np.ones((2, 3), np.float32))
    m.mT.__imul__(ts.asarray(np.array([[2.0, 3.0]], np.float32)))
    assert m.tolist() == [[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]


def test_comparison_and_unary_operators():
    a = np.array([-2, 0, 3], np.int16)
    t = ts.asarray(a)
    for sym in ["==", "!=", "<", "<=", ">", ">="]:
        assert_same(eval(f"t {sym} 0"), eval(f"a {sym} 0"))
        assert_same(eval(f"1 {sym} t"), eval(f"1 {sym} a"))
    assert_same(-t, -a)
    assert_same(+t, +a)
    assert_same(abs(t), abs(a))
    assert_same(~t, ~a)
    assert_same(~ts.asarray(np.array([True, False])), np.array([False, True]))
    assert (t == None) is False  # noqa: E711  (NotImplemented -> identity comparison)
    assert (t != "abc") is True
    assert t.__eq__(object()) is NotImplemented
    with pytest.raises(TypeError):
        t < None


def test_torch_style_methods():
    x = ts.asarray(np.array([-1.5, 0.25, 4.0], np.float32))
    assert_same(x.abs(), np.abs(x.numpy()))
    assert_same(x.exp(), np.exp(x.numpy()))
    assert_same(x.clamp(min=0), np.clip(x.numpy(), 0, None))
    assert_same(x.clip(-1, 1), np.clip(x.numpy(), -1, 1))
    assert_same(x.pow(2), x.numpy() ** 2)
    assert_same(x.maximum(0.0), np.maximum(x.numpy(), 0))
    assert_same(x.neg(), -x.numpy())
    assert_same(ts.clamp(x, max=1.0), np.clip(x.numpy(), None, 1.0))
    y = ts.asarray(np.ones(3, np.float32))
    assert y.add_(x) is y and y.tolist() == (1 + x.numpy()).tolist()


# ---- errors
@pytest.mark.parametrize("call, exc, match", [
    (lambda f, i, c: ts.bitwise_and(f, f), TypeError, "bitwise_and: .*float32"),
    (lambda f, i, c: ts.bitwise_left_shift(f, i), TypeError, "bitwise_left_shift"),
    (lambda f, i, c: ts.bitwise_invert(f), TypeError, "bitwise_invert: .*float32"),
    (lambda f, i, c: ts.less(c, c), TypeError, "less: .*complex64"),
    (lambda f, i, c: ts.floor_divide(c, c), TypeError, "floor_divide"),
    (lambda f, i, c: ts.remainder(c, 2), TypeError, "remainder"),
    (lambda f, i, c: ts.atan2(c, f), TypeError, "atan2"),
    (lambda f, i, c: ts.logaddexp(c, c), TypeError, "logaddexp"),
    (lambda f, i, c: ts.maximum(c, c), TypeError, "maximum"),
    (lambda f, i, c: ts.signbit(c), TypeError, "signbit"),
    (lambda f, i, c: ts.ceil(c), TypeError, "ceil"),
    (lambda f, i, c: ts.negative(ts.asarray(np.array([True]))), TypeError, "negative"),
    (lambda f, i, c: ts.add(f, ts.asarray(np.zeros(4, np.float32))), ValueError, "add"),
    (lambda f, i, c: ts.add(1, 2), TypeError, "add: expected at least one tensor"),
    (lambda f, i, c: ts.exp("x"), TypeError, "exp"),
    (lambda f, i, c: ts.multiply(f, None), TypeError, "multiply"),
])
def test_errors(call, exc, match):
    f = ts.asarray(np.ones(3, np.float32))
    i = ts.asarray(np.ones(3, np.int32))
    c = ts.asarray(np.ones(3, np.complex64))
    with pytest.raises(exc, match=match):
        call(f, i, c)


def test_positional_only():
    with pytest.raises(TypeError):
        ts.add(x1=ts.asarray([1.0]), x2=ts.asarray([2.0]))
    with pytest.raises(TypeError):
        ts.exp(x=ts.asarray([1.0]))


def test_weak_scalars_keep_tensor_dtype():
    x = ts.asarray(np.array([1, 2], np.int8))
    assert (x + 1).dtype == ts.int8 and ts.maximum(x, 1).dtype == ts.int8
    assert ts.exp(x).dtype == ts.float32 and ts.sqrt(ts.asarray([True])).dtype == ts.float32
    h = ts.asarray(np.array([1.0], np.float16))
    assert (h * 2.5).dtype == ts.float16 and ts.hypot(h, 2).dtype == ts.float16
    assert ts.equal(x, 1.5).dtype == ts.bool


# ---- against PyTorch
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_floor_semantics_match_torch(dtype):
    a = np.array([-7, 7, -7, 7, -1, 1, 0, 9], dtype)
    b = np.array([2, -2, -2, 2, 3, -3, 5, 4], dtype)
    check_torch(lambda m, x, y: m.remainder(x, y), a, b)
    check_torch(lambda m, x, y: m.floor_divide(x, y), a, b)
    check_torch(lambda m, x, y: x % y, a, b)
    check_torch(lambda m, x, y: x // y, a, b)


def test_misc_against_torch():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    for name in ("sign", "trunc", "expm1", "sinh", "atanh", "logaddexp"):
        if name == "logaddexp":
            check_torch(lambda m, a, b: m.logaddexp(a, b), x, x[::-1].copy())
        else:
            check_torch(lambda m, a: getattr(m, name)(a), x)
