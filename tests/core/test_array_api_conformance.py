"""Regression tests for array API standard (2024.12) conformance gaps found by probing tessera
the way the array-api-tests suite does (inspection namespace, big Python ints, T, ...)."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts

STANDARD_DTYPE_NAMES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                        "uint64", "float32", "float64", "complex64", "complex128"}
KINDS = [None, "bool", "signed integer", "unsigned integer", "integral", "real floating",
         "complex floating", "numeric", ("bool", "real floating"), ("signed integer",)]


# --- __array_namespace_info__ -------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_info_dtypes_lists_only_standard_dtypes(kind):
    info = ts.__array_namespace_info__()
    for device in [None] + info.devices():
        out = info.dtypes(kind=kind, device=device)
        assert set(out) <= STANDARD_DTYPE_NAMES
        for name, dt in out.items():
            assert dt.name == name
            assert ts.empty(1, dtype=dt, device=device).dtype == dt
            if kind is not None:
                assert ts.isdtype(dt, kind)
    assert set(info.dtypes()) == STANDARD_DTYPE_NAMES


def test_info_default_dtypes_per_device():
    info = ts.__array_namespace_info__()
    for device in info.devices():
        d = info.default_dtypes(device=device)
        assert {"real floating", "complex floating", "integral", "indexing"} <= set(d)
    assert info.default_device() in info.devices()


# --- Python ints past int64 (NumPy: uint64 when they fit there) ---------------------------

@pytest.mark.parametrize("obj", [2**64 - 1, 2**63, [2**64 - 1], [1, 2**63], [[0], [2**64 - 1]]])
def test_asarray_ints_past_int64_become_uint64(obj):
    # NumPy picks uint64 for a lone big int (and float64 for mixed lists: we keep them exact).
    got = ts.asarray(obj)
    assert got.dtype == ts.uint64
    assert got.tolist() == obj


@pytest.mark.parametrize("obj", [[1, 2**64 - 1], [2**63], 2**64 - 1])
def test_asarray_uint64_dtype_takes_full_range(obj):
    got = ts.asarray(obj, dtype=ts.uint64)
    assert got.tolist() == np.asarray(obj, dtype=np.uint64).tolist()


def test_full_infers_uint64_for_big_int():
    got = ts.full((2,), 2**64 - 1)
    assert got.dtype == ts.uint64 and got.tolist() == [2**64 - 1] * 2


@pytest.mark.parametrize("obj", [[-1, 2**64 - 1], [2**64], [[2**70]]])
def test_asarray_ints_beyond_uint64_raise(obj):
    with pytest.raises(OverflowError, match="asarray"):
        ts.asarray(obj)


# --- x.T is for matrices only -------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4), (1, 1, 1, 1)])
def test_T_raises_unless_2d(shape):
    with pytest.raises(ValueError, match="T: expected a 2-dimensional tensor"):
        ts.ones(shape).T


def test_T_transposes_matrices_and_views():
    a = np.arange(6.0).reshape(2, 3)
    x = ts.asarray(a)
    assert x.T.tolist() == a.T.tolist()
    assert x[:, ::-1].T.tolist() == a[:, ::-1].T.tolist()


# --- Python scalar conversions return exact builtin types ---------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint8", "uint64", "float32",
                                   "float64"])
def test_int_returns_exact_int(dtype, recwarn):
    x = ts.asarray(1, dtype=getattr(ts, dtype))
    out = int(x)
    assert type(out) is int and out == 1
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint32", "int64"])
def test_index_returns_exact_int(dtype, recwarn):
    import operator
    out = operator.index(ts.asarray(1, dtype=getattr(ts, dtype)))
    assert type(out) is int and out == 1
    assert [10, 20][ts.asarray(1, dtype=getattr(ts, dtype))] == 20
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_index_rejects_inexact(dtype):
    import operator
    with pytest.raises(TypeError, match="__index__"):
        operator.index(ts.asarray(1, dtype=getattr(ts, dtype)))


def test_int_float_complex_bool_types():
    assert type(float(ts.asarray(True))) is float
    assert type(complex(ts.asarray(3, dtype=ts.int8))) is complex
    assert type(bool(ts.asarray(0.0))) is bool
    assert int(ts.asarray(-2.7, dtype=ts.float64)) == int(np.float64(-2.7))
    with pytest.raises(TypeError, match="int"):
        int(ts.asarray(1j))


# --- complex special cases of the standard's tables ---------------------------------------

INF, NAN = float("inf"), float("nan")


def _same_complex(got: complex, want: complex) -> bool:
    def part(g: float, w: float) -> bool:
        if w != w:
            return g != g
        return g == w and np.copysign(1, g) == np.copysign(1, w)
    return part(got.real, want.real) and part(got.imag, want.imag)


# (input, expm1 result) straight from the 2024.12 expm1 table (signs left unspecified there are
# compared through the C99 cexp value minus 1, which the table is derived from).
EXPM1_TABLE = [
    (complex(0.0, 0.0), complex(0.0, 0.0)),
    (complex(-0.0, 0.0), complex(0.0, 0.0)),
    (complex(1.0, INF), complex(NAN, NAN)),
    (complex(1.0, NAN), complex(NAN, NAN)),
    (complex(INF, 0.0), complex(INF, 0.0)),
    (complex(-INF, 2.0), complex(0.0 * np.cos(2.0) - 1.0, 0.0 * np.sin(2.0))),
    (complex(INF, 2.0), complex(-INF, INF)),
    (complex(-INF, INF), complex(-1.0, 0.0)),
    (complex(INF, INF), complex(INF, NAN)),
    (complex(-INF, NAN), complex(-1.0, 0.0)),
    (complex(INF, NAN), complex(INF, NAN)),
    (complex(NAN, 0.0), complex(NAN, 0.0)),
    (complex(NAN, 2.0), complex(NAN, NAN)),
    (complex(NAN, NAN), complex(NAN, NAN)),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_expm1_complex_special_cases(dtype):
    z = np.array([c for c, _ in EXPM1_TABLE], dtype=dtype)
    got = ts.expm1(ts.asarray(z)).numpy()
    for (c, want), g in zip(EXPM1_TABLE, got):
        w = complex(want)
        if c == complex(-INF, INF) or c == complex(-INF, NAN):  # imaginary sign unspecified
            assert g.real == -1.0 and g.imag == 0.0, (c, g)
        elif c == complex(INF, INF) or c == complex(INF, NAN):  # real sign unspecified
            assert abs(g.real) == INF and g.imag != g.imag, (c, g)
        else:
            assert _same_complex(complex(g), w), (c, g, w)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_expm1_complex_finite_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    z = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dtype)
    z[:4] = [1e-8 + 1e-8j, -1e-7j, 1e-9, 0.5 - 0.25j]
    rtol = 1e-5 if dtype == "complex64" else 1e-12
    np.testing.assert_allclose(ts.expm1(ts.asarray(z)).numpy(), np.expm1(z), rtol=rtol)
    assert _same_complex(complex(ts.expm1(ts.asarray(np.array([complex(0.0, -0.0)], dtype)))[0]),
                         complex(0.0, -0.0))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sign_complex_zero_is_positive_zero(dtype):
    z = np.array([complex(a, b) for a in (0.0, -0.0) for b in (0.0, -0.0)], dtype=dtype)
    for g in ts.sign(ts.asarray(z)).numpy():
        assert _same_complex(complex(g), complex(0.0, 0.0))
    got = ts.sign(ts.asarray(np.array([3 + 4j, NAN + 1j, complex(1, NAN)], dtype=dtype))).numpy()
    np.testing.assert_allclose(got[0], 0.6 + 0.8j, rtol=1e-6)
    assert np.isnan(got[1].real) and np.isnan(got[1].imag)
    assert np.isnan(got[2].real) and np.isnan(got[2].imag)


# --- norms over empty reductions: the largest of no magnitudes is 0 (NumPy) ------------------

@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 3), (2, 3)])
@pytest.mark.parametrize("ord", [1, -1, 2, -2, float("inf"), -float("inf"), "fro", "nuc"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm_empty_matches_numpy(shape, ord, keepdims):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    try:
        want = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    except ValueError:
        with pytest.raises(ValueError):
            ts.linalg.matrix_norm(ts.asarray(a), ord=ord, keepdims=keepdims)
        return
    got = ts.linalg.matrix_norm(ts.asarray(a), ord=ord, keepdims=keepdims)
    assert got.dtype == ts.float64 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("shape,axis", [((0, 3), 0), ((0, 3), 1), ((0, 3), None), ((2, 0), (0, 1)),
                                        ((4, 0, 2), (1,)), ((3,), None)])
@pytest.mark.parametrize("ord", [float("inf"), 1, 2, 0])
def test_vector_norm_empty_matches_numpy(shape, axis, ord):
    a = np.ones(shape, dtype=np.float32)
    got = ts.linalg.vector_norm(ts.asarray(a), axis=axis, ord=ord, keepdims=True)
    want = np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=True)
    assert got.dtype == ts.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want)


def test_vector_norm_min_of_empty_still_raises():
    with pytest.raises(ValueError):
        ts.linalg.vector_norm(ts.ones((0, 3)), axis=0, ord=-float("inf"))


# --- unique_* accept complex input (the standard puts no dtype limit on them) ---------------

@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("seed", range(6))
def test_unique_complex_matches_numpy(dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 15))
    a = (rng.integers(-2, 3, n) + 1j * rng.integers(-2, 3, n)).astype(dtype)
    if n:
        a[rng.integers(0, n)] = complex(np.nan, 1.0)  # every NaN is its own value
        a[rng.integers(0, n)] = complex(-0.0, 0.0)    # and -0 merges with +0
    a = a.reshape((1, n)) if seed % 2 else a
    r = ts.unique_all(ts.asarray(a))
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=False)
    np.testing.assert_array_equal(r.values.numpy(), v)
    assert r.values.dtype == getattr(ts, dtype)
    np.testing.assert_array_equal(r.indices.numpy(), i)
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv.reshape(a.shape))
    np.testing.assert_array_equal(r.counts.numpy(), c)
    np.testing.assert_array_equal(ts.unique_values(ts.asarray(a)).numpy(), v)
    uc = ts.unique_counts(ts.asarray(a))
    np.testing.assert_array_equal(uc.counts.numpy(), c)
    ui = ts.unique_inverse(ts.asarray(a))
    np.testing.assert_array_equal(ui.values.numpy()[ui.inverse_indices.numpy()], a)


def test_unique_complex_orders_lexicographically_on_views():
    a = np.array([2 + 1j, 1 + 5j, 1 - 5j, 2 + 1j, -3j, 1 + 5j], dtype=np.complex128)
    x = ts.asarray(a[::-1].copy())[::-1]  # negative-stride view
    np.testing.assert_array_equal(ts.unique_values(x).numpy(), np.unique(a))


@pytest.mark.parametrize("seed", range(8))
def test_unique_complex_nan_order_matches_numpy(seed):
    # NumPy sorts NaN-bearing complex values after all others: R+NaNj by R, then NaN+Rj by R.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    a = rng.choice([0.0, 1.0, -1.0, np.nan], n) + 0j
    a.imag = rng.choice([0.0, 2.0, -2.0, np.nan], n)
    r = ts.unique_all(ts.asarray(a))
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                             equal_nan=False)
    np.testing.assert_array_equal(r.values.numpy(), v)
    np.testing.assert_array_equal(r.indices.numpy(), i)
    np.testing.assert_array_equal(r.inverse_indices.numpy(), inv)
    np.testing.assert_array_equal(r.counts.numpy(), c)
