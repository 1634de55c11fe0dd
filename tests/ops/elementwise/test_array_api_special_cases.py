"""The array API standard's special cases for floor_divide / // / //= and remainder / % (the
full lists of the 2023.12 text), clip with bounds outside an integer dtype, clip's signature,
and eye with a diagonal beyond the matrix. NumPy differs from the standard on six floor_divide
cases (inf // finite and finite // -inf style); everywhere else the results are compared with
NumPy too."""
import inspect
import math

import numpy as np
import pytest

import tessera as ts
from tessera import errors

INF, NAN = math.inf, math.nan
POS, NEG = 3.5, -3.5  # finite nonzero operands


def _same(got, want):
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


# (x1, x2, expected) straight from the standard's bullet lists
FLOOR_DIVIDE = [
    (NAN, 2.0, NAN), (2.0, NAN, NAN), (NAN, NAN, NAN),
    (INF, INF, NAN), (INF, -INF, NAN), (-INF, INF, NAN), (-INF, -INF, NAN),
    (0.0, 0.0, NAN), (0.0, -0.0, NAN), (-0.0, 0.0, NAN), (-0.0, -0.0, NAN),
    (0.0, POS, 0.0), (0.0, INF, 0.0), (-0.0, POS, -0.0), (-0.0, INF, -0.0),
    (0.0, NEG, -0.0), (0.0, -INF, -0.0), (-0.0, NEG, 0.0), (-0.0, -INF, 0.0),
    (POS, 0.0, INF), (INF, 0.0, INF), (POS, -0.0, -INF), (INF, -0.0, -INF),
    (NEG, 0.0, -INF), (-INF, 0.0, -INF), (NEG, -0.0, INF), (-INF, -0.0, INF),
    (INF, POS, INF), (INF, NEG, -INF), (-INF, POS, -INF), (-INF, NEG, INF),
    (POS, INF, 0.0), (POS, -INF, -0.0), (NEG, INF, -0.0), (NEG, -INF, 0.0),
    (7.0, 2.0, 3.0), (-7.0, -2.0, 3.0), (7.0, -2.0, -4.0), (-7.0, 2.0, -4.0),
    (1.0, 3.0, 0.0), (-1.0, -3.0, 0.0),
    (1e300, 1e-300, INF), (-1e300, 1e-300, -INF),  # overflow: an infinity of the quotient's sign
]
# where NumPy follows Python's divmod instead of floor(x1 / x2)
NUMPY_DIFFERS = {(INF, POS), (INF, NEG), (-INF, POS), (-INF, NEG), (POS, -INF), (NEG, INF)}

REMAINDER = [
    (NAN, 2.0, NAN), (2.0, NAN, NAN),
    (INF, INF, NAN), (INF, -INF, NAN), (-INF, INF, NAN), (-INF, -INF, NAN),
    (0.0, 0.0, NAN), (0.0, -0.0, NAN), (-0.0, 0.0, NAN), (-0.0, -0.0, NAN),
    (0.0, POS, 0.0), (0.0, INF, 0.0), (-0.0, POS, 0.0), (-0.0, INF, 0.0),
    (0.0, NEG, -0.0), (0.0, -INF, -0.0), (-0.0, NEG, -0.0), (-0.0, -INF, -0.0),
    (POS, 0.0, NAN), (POS, -0.0, NAN), (NEG, 0.0, NAN), (NEG, -0.0, NAN),
    (INF, POS, NAN), (INF, NEG, NAN), (-INF, POS, NAN), (-INF, NEG, NAN),
    (POS, INF, POS), (POS, -INF, -INF), (NEG, INF, INF), (NEG, -INF, NEG),
    (7.0, 2.0, 1.0), (-7.0, 2.0, 1.0), (7.0, -2.0, -1.0), (-7.0, -2.0, -1.0),
    (4.0, 2.0, 0.0), (-4.0, 2.0, 0.0), (4.0, -2.0, -0.0),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("form", ["function", "operator", "inplace", "scalar"])
def test_floor_divide_special_cases(dtype, form):
    if dtype in ("float16", "bfloat16"):
        cases = [c for c in FLOOR_DIVIDE if abs(c[0]) != 1e300]
    else:
        cases = FLOOR_DIVIDE if dtype == "float64" else [c for c in FLOOR_DIVIDE if abs(c[0]) != 1e300]
    dt = getattr(ts, dtype)
    a = ts.asarray([c[0] for c in cases], dtype=dt)
    b = ts.asarray([c[1] for c in cases], dtype=dt)
    if form == "function":
        r = ts.floor_divide(a, b)
    elif form == "operator":
        r = a // b
    elif form == "inplace":
        r = ts.asarray(a, copy=True)
        r //= b
    else:
        r = ts.stack([ts.asarray([c[0]], dtype=dt) // c[1] for c in cases]).reshape(-1)
    assert r.dtype == dt
    got = r.astype(ts.float64).tolist()
    bad = [(c, g) for c, g in zip(cases, got) if not _same(g, c[2])]
    assert not bad, bad


def test_floor_divide_finite_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.uniform(-50, 50, 2000)
    b = rng.uniform(-5, 5, 2000)
    b[::7] = rng.integers(-4, 5, b[::7].shape)  # exact multiples and zeros
    a[::11] = np.round(a[::11])
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    got = np.asarray(ts.floor_divide(ts.asarray(a), ts.asarray(b)))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # the table agrees with NumPy except where NumPy is documented to deviate
    for x1, x2, expected in FLOOR_DIVIDE:
        with np.errstate(all="ignore"):
            n = float(np.floor_divide(np.float64(x1), np.float64(x2)))
        if (x1, x2) in NUMPY_DIFFERS:
            assert not _same(n, expected)
        else:
            assert _same(n, expected), (x1, x2, n, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_remainder_special_cases(dtype):
    dt = getattr(ts, dtype)
    a = ts.asarray([c[0] for c in REMAINDER], dtype=dt)
    b = ts.asarray([c[1] for c in REMAINDER], dtype=dt)
    for r in (ts.remainder(a, b), a % b):
        got = r.astype(ts.float64).tolist()
        bad = [(c, g) for c, g in zip(REMAINDER, got) if not _same(g, c[2])]
        assert not bad, bad
    with np.errstate(all="ignore"):
        want = np.remainder(np.asarray([c[0] for c in REMAINDER]), np.asarray([c[1] for c in REMAINDER]))
    for w, c in zip(want.tolist(), REMAINDER):
        assert _same(w, c[2]), c  # NumPy follows the standard here


def test_integer_floor_divide_unchanged():
    a = np.array([7, -7, 7, -7, 0, 5], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 1], dtype=np.int32)
    got = np.asarray(ts.asarray(a) // ts.asarray(b))
    assert got.tolist() == (a // b).tolist()
    # a zero integer divisor (unspecified by the standard) raises as in PyTorch
    with pytest.raises(errors.ZeroDivisionError):
        ts.asarray(a) // ts.asarray(np.zeros(6, np.int32))


# ---------------------------------------------------------------- clip
@pytest.mark.parametrize("dtype,lo,hi,x", [
    ("uint8", -1, 5, [0, 3, 9, 255]),
    ("uint8", -300, 300, [0, 3, 9, 255]),
    ("uint8", 300, None, [0, 3, 255]),
    ("uint8", None, -5, [0, 3, 255]),
    ("int8", -1000, 1000, [-128, -5, 0, 127]),
    ("int8", 200, None, [-128, 0, 127]),
    ("int8", None, -200, [-128, 0, 127]),
    ("int16", -(2 ** 40), 2 ** 40, [-32768, 0, 32767]),
    ("int64", -1, 2 ** 63 + 5, [-(2 ** 63), 0, 2 ** 63 - 1]),
    ("uint64", -1, 2 ** 64 - 1, [0, 2 ** 63, 2 ** 64 - 1]),
    ("uint16", -1.5, 70000.5, [0, 7, 65535]),
])
def test_clip_bounds_outside_integer_dtype(dtype, lo, hi, x):
    """Clamping in exact arithmetic: a bound past the dtype's range acts as the range's end."""
    xs = ts.asarray(np.array(x, dtype=dtype))
    got = ts.clip(xs, lo, hi)
    assert got.dtype == xs.dtype
    lo_i = -math.inf if lo is None else lo
    hi_i = math.inf if hi is None else hi
    want = [min(max(v, lo_i), hi_i) for v in x]
    info = np.iinfo(dtype)
    want = [int(min(max(w, info.min), info.max)) for w in want]
    assert got.tolist() == want
    # tensor bounds of a wider dtype behave the same
    if lo is not None and isinstance(lo, int) and abs(lo) < 2 ** 63:
        lo_t = ts.asarray([lo] * len(x), dtype=ts.int64)
        assert ts.clip(xs, lo_t, hi).tolist() == want


def test_clip_uint8_example_from_issue():
    assert ts.clip(ts.asarray([0], dtype=ts.uint8), -1, 5).tolist() == [0]
    assert ts.asarray([0], dtype=ts.uint8).clip(-1, 5).tolist() == [0]


def test_clip_nan_bound_on_integers_bounds_nothing():
    x = ts.asarray([1, 5, 9], dtype=ts.int32)
    assert ts.clip(x, ts.asarray([math.nan] * 3), 6.0).tolist() == [1, 5, 6]


def test_clip_in_range_matches_numpy():
    rng = np.random.default_rng(1)
    for dtype in ("int8", "uint8", "int32", "float32", "float64"):
        x = (rng.uniform(-100, 100, 50)).astype(dtype)
        lo, hi = (rng.uniform(-50, 0, 50)).astype(dtype), (rng.uniform(0, 50, 50)).astype(dtype)
        np.testing.assert_array_equal(np.asarray(ts.clip(ts.asarray(x), ts.asarray(lo), ts.asarray(hi))),
                                      np.clip(x, lo, hi))


def test_clip_signature_is_readable():
    sig = inspect.signature(ts.clip)
    assert list(sig.parameters) == ["x", "min", "max"]
    assert sig.parameters["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert sig.parameters["min"].default is None and sig.parameters["max"].default is None
    # the standard's signature: clip(x, /, min=None, max=None)
    assert str(sig) == "(x, /, min=None, max=None)"
    with pytest.raises(TypeError, match=r"clip\(x, /, min=None, max=None\)"):
        ts.clip(ts.ones(2), 1, 2, 3)


# ---------------------------------------------------------------- eye
@pytest.mark.parametrize("n,m,k", [(3, 3, 3), (3, 3, -3), (3, 3, 5), (3, 3, -5), (2, 5, 5), (2, 5, 4),
                                   (5, 2, -5), (5, 2, -4), (0, 3, 1), (3, 0, -1), (4, 4, 2 ** 62),
                                   (4, 4, -(2 ** 62)), (4, 4, 2 ** 63 - 1), (4, 4, -(2 ** 63))])
def test_eye_diagonal_beyond_the_matrix(n, m, k):
    got = ts.eye(n, m, k=k)
    want = np.eye(n, m, k=k, dtype=np.float32) if abs(k) < 2 ** 62 else np.zeros((n, m), np.float32)
    assert got.shape == (n, m) and got.dtype == ts.float32
    np.testing.assert_array_equal(np.asarray(got), want)
