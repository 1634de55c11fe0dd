"""Differential tests of ts.fft (the array API fft extension) against NumPy's pocketfft.

Transform outputs are compared in the L2 sense against NumPy computing in float64/complex128:
||ours - ref|| <= tol * ||ref||, tol 2e-6 for complex64 and 1e-12 for complex128. Per-element
tolerances would be wrong for an FFT: its error is spread evenly over the bins, so small bins
carry the same absolute error as large ones.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import arrays, assert_same, strided_views

NORMS = ["backward", "ortho", "forward"]
REAL = ["float32", "float64"]
CPLX = ["complex64", "complex128"]
PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67]


def _ref(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def assert_fft_close(got: ts.Tensor, want: np.ndarray, dtype: str) -> None:
    """got matches want (NumPy on float64/complex128 input) in dtype, shape and L2 error."""
    g = got.numpy()
    assert g.dtype.name == dtype, f"dtype {g.dtype} != {dtype}"
    assert g.shape == want.shape, f"shape {g.shape} != {want.shape}"
    tol = 2e-6 if dtype in ("complex64", "float32") else 1e-12
    err = np.linalg.norm((g.astype(want.dtype) - want).ravel())
    ref = np.linalg.norm(want.ravel())
    assert err <= tol * ref + 1e-30, f"relative L2 error {err / max(ref, 1e-300):.3g} > {tol}"


def out_dtype(in_dtype: str, real_out: bool) -> str:
    single = in_dtype in ("float16", "float32", "complex64", "bfloat16")
    if real_out:
        return "float32" if single else "float64"
    return "complex64" if single else "complex128"


@st.composite
def signal(draw, dtypes, max_len=64, max_dims=3):
    """(x, axis): a non-empty array whose `axis` has 1..max_len entries, in varied layouts."""
    dtype = draw(st.sampled_from(dtypes))
    ndim = draw(st.integers(1, max_dims))
    axis = draw(st.integers(-ndim, ndim - 1))
    shape = [draw(st.integers(1, 3)) for _ in range(ndim)]
    shape[axis] = draw(st.one_of(st.integers(1, max_len), st.sampled_from(PRIMES)))
    x = strided_views(draw, draw(arrays(dtype, tuple(shape))))
    return x, axis


lengths = st.one_of(st.none(), st.integers(1, 70))


@given(signal(REAL + CPLX), lengths, st.sampled_from(NORMS), st.sampled_from(["fft", "ifft"]))
def test_fft_ifft(xa, n, norm, name):
    x, axis = xa
    got = getattr(ts.fft, name)(ts.asarray(x), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(_ref(x), n=n, axis=axis, norm=norm)
    assert_fft_close(got, want, out_dtype(x.dtype.name, False))


@given(signal(REAL), lengths, st.sampled_from(NORMS), st.sampled_from(["rfft", "ihfft"]))
def test_rfft_ihfft(xa, n, norm, name):
    x, axis = xa
    got = getattr(ts.fft, name)(ts.asarray(x), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(_ref(x), n=n, axis=axis, norm=norm)
    assert_fft_close(got, want, out_dtype(x.dtype.name, False))


@given(signal(REAL + CPLX), st.sampled_from(NORMS), st.sampled_from(["irfft", "hfft"]),
       st.data())
def test_irfft_hfft(xa, norm, name, data):
    x, axis = xa
    # NumPy's default n = 2*(m-1) is invalid for m == 1: both must raise then.
    n = data.draw(st.one_of(st.none(), st.integers(1, 70)) if x.shape[axis] > 1
                  else st.integers(1, 70))
    got = getattr(ts.fft, name)(ts.asarray(x), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(_ref(x), n=n, axis=axis, norm=norm)
    assert_fft_close(got, want, out_dtype(x.dtype.name, True))


@pytest.mark.parametrize("n", [2**16, 3**9, 100003, 2 * 3 * 5 * 7 * 11 * 13, 4099 * 2])
@pytest.mark.parametrize("dtype", CPLX)
def test_large_lengths(n, dtype):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    for name in ("fft", "ifft"):
        assert_fft_close(getattr(ts.fft, name)(ts.asarray(x)), getattr(np.fft, name)(_ref(x)),
                         dtype)
    xr = x.real.copy()
    assert_fft_close(ts.fft.rfft(ts.asarray(xr)), np.fft.rfft(_ref(xr)), dtype)
    half = x[: n // 2 + 1]
    assert_fft_close(ts.fft.irfft(ts.asarray(half), n=n), np.fft.irfft(_ref(half), n=n),
                     out_dtype(dtype, True))


def test_float32_precision_at_2_16():
    """float32 computes in complex64 within 1e-5 relative L2 error of NumPy's float64 result."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(2**16).astype(np.float32)
    for got, want in [(ts.fft.fft(ts.asarray(x)), np.fft.fft(x.astype(np.float64))),
                      (ts.fft.rfft(ts.asarray(x)), np.fft.rfft(x.astype(np.float64)))]:
        assert got.dtype == ts.complex64
        err = np.linalg.norm(got.numpy() - want) / np.linalg.norm(want)
        assert err < 1e-5, err


def test_many_lengths_past_the_plan_cache_bound():
    """More distinct lengths than the plan cache keeps: evicted plans are rebuilt correctly."""
    rng = np.random.default_rng(2)
    for n in range(200, 290):
        x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
        assert_fft_close(ts.fft.ifft(ts.asarray(x)), np.fft.ifft(x), "complex128")


def test_batched_rows_run_threaded():
    """Enough rows that the batch is split across threads; every row must still be right."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((257, 384)) + 1j * rng.standard_normal((257, 384))
    assert_fft_close(ts.fft.fft(ts.asarray(x), axis=0), np.fft.fft(x, axis=0), "complex128")
    assert_fft_close(ts.fft.rfft(ts.asarray(x.real), axis=1), np.fft.rfft(x.real, axis=1),
                     "complex128")


@pytest.mark.parametrize("n", [1, 12, 64, 67, 101])
def test_inner_axis_lanes(n):
    """Transforms along a non-last axis run column blocks in place (Stockham lanes, or column by
    column for Bluestein lengths); 37 columns leave a partial block."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n, 37)) + 1j * rng.standard_normal((2, n, 37))
    for name in ("fft", "ifft"):
        assert_fft_close(getattr(ts.fft, name)(ts.asarray(x), axis=1, norm="ortho"),
                         getattr(np.fft, name)(x, axis=1, norm="ortho"), "complex128")
    x32 = x.astype(np.complex64)
    assert_fft_close(ts.fft.fft(ts.asarray(x32), n=n + 3, axis=1), np.fft.fft(x, n=n + 3, axis=1),
                     "complex64")


@st.composite
def nd_case(draw, dtypes, real_last=False):
    dtype = draw(st.sampled_from(dtypes))
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 7)) for _ in range(ndim))
    x = strided_views(draw, draw(arrays(dtype, shape)))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-ndim, ndim - 1), min_size=1,
                                             max_size=ndim, unique_by=lambda a: a % ndim)))
    s = None
    if axes is not None and draw(st.booleans()):
        s = [draw(st.sampled_from([-1, 1, 2, 3, 5, 8])) for _ in axes]
        if real_last and s[-1] == -1 and x.shape[axes[-1]] == 1:
            s[-1] = 4  # the default 2*(m-1) = 0 would be invalid
    return x, s, axes


def _np_nd(name, x, s, axes, norm):
    if s is not None:  # NumPy has no -1 in s: it means "the input's length" (irfftn: 2*(m-1))
        s = [(2 * (x.shape[a] - 1) if name == "irfftn" and i == len(s) - 1 else x.shape[a])
             if v == -1 else v for i, (v, a) in enumerate(zip(s, axes))]
    return getattr(np.fft, name)(_ref(x), s=s, axes=axes, norm=norm)


@given(nd_case(REAL + CPLX), st.sampled_from(NORMS), st.sampled_from(["fftn", "ifftn"]))
def test_fftn_ifftn(case, norm, name):
    x, s, axes = case
    got = getattr(ts.fft, name)(ts.asarray(x), s=s, axes=axes, norm=norm)
    assert_fft_close(got, _np_nd(name, x, s, axes, norm), out_dtype(x.dtype.name, False))


@given(nd_case(REAL), st.sampled_from(NORMS))
def test_rfftn(case, norm):
    x, s, axes = case
    got = ts.fft.rfftn(ts.asarray(x), s=s, axes=axes, norm=norm)
    assert_fft_close(got, _np_nd("rfftn", x, s, axes, norm), out_dtype(x.dtype.name, False))


@given(nd_case(CPLX, real_last=True), st.sampled_from(NORMS))
def test_irfftn(case, norm):
    x, s, axes = case
    last = (axes[-1] if axes else -1)
    if s is None and x.shape[last] == 1:
        with pytest.raises(ValueError):
            ts.fft.irfftn(ts.asarray(x), s=s, axes=axes, norm=norm)
        return
    got = ts.fft.irfftn(ts.asarray(x), s=s, axes=axes, norm=norm)
    assert_fft_close(got, _np_nd("irfftn", x, s, axes, norm), out_dtype(x.dtype.name, True))


@given(st.integers(1, 40), st.sampled_from(NORMS))
def test_hfft_ihfft_round_trip(n, norm):
    rng = np.random.default_rng(n)
    y = rng.standard_normal(n)
    h = ts.fft.ihfft(ts.asarray(y), norm=norm)
    assert_fft_close(h, np.fft.ihfft(y, norm=norm), "complex128")
    back = ts.fft.hfft(h, n=n, norm=norm)
    assert_fft_close(back, y, "float64")


def test_round_trips_every_norm():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 9, 10))
    for norm in NORMS:
        t = ts.asarray(x)
        assert_fft_close(ts.fft.irfftn(ts.fft.rfftn(t, norm=norm), s=x.shape, norm=norm), x,
                         "float64")
        assert_fft_close(ts.fft.ifftn(ts.fft.fftn(t, norm=norm), norm=norm), x.astype(complex),
                         "complex128")


def test_half_precision_inputs_compute_in_complex64():
    x = np.linspace(-1, 1, 24, dtype=np.float32)
    for dt in (ts.float16, ts.bfloat16):
        t = ts.asarray(x).astype(dt)
        ref = np.fft.fft(t.astype(ts.float64).numpy())
        assert_fft_close(ts.fft.fft(t), ref, "complex64")
        assert ts.fft.irfft(ts.fft.rfft(t)).dtype == ts.float32


def test_dim_alias_and_norm_none():
    x = np.arange(12.0).reshape(3, 4)
    assert_fft_close(ts.fft.fft(ts.asarray(x), dim=0, norm=None), np.fft.fft(x, axis=0),
                     "complex128")
    assert_fft_close(ts.fft.fftn(ts.asarray(x), dim=(0,)), np.fft.fftn(x, axes=(0,)),
                     "complex128")


def test_matches_torch():
    import torch
    x = np.random.default_rng(5).standard_normal((3, 50)).astype(np.float32)
    want = torch.fft.rfft(torch.from_numpy(x), n=64, norm="ortho").numpy()
    assert_fft_close(ts.fft.rfft(ts.asarray(x), n=64, norm="ortho"), want.astype(np.complex128),
                     "complex64")


@pytest.mark.parametrize("shape,axes", [((5,), None), ((6,), None), ((4, 7), None),
                                        ((4, 7), (0,)), ((3, 4, 5), (0, 2)), ((3, 4, 5), 1),
                                        ((3, 4, 5), (-1, 0)), ((2, 3), ())])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(shape, axes, name):
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    assert_same(getattr(ts.fft, name)(ts.asarray(x), axes=axes),
                getattr(np.fft, name)(x, axes=axes))


@given(st.integers(1, 20), st.sampled_from([1.0, 0.1, 2.5]),
       st.sampled_from([None, "float32", "float64"]))
def test_freqs(n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        got = getattr(ts.fft, name)(n, d=d, dtype=dtype)
        want = getattr(np.fft, name)(n, d=d).astype(dtype or "float32")
        assert_same(got, want)


def test_errors():
    x = ts.asarray(np.ones(8))
    for fn in (ts.fft.fft, ts.fft.ifft, ts.fft.rfft, ts.fft.irfft, ts.fft.hfft, ts.fft.ihfft):
        with pytest.raises(ValueError, match="number of data points"):
            fn(x, n=0)
        with pytest.raises(ValueError, match="number of data points"):
            fn(x, n=-3)
        with pytest.raises(ValueError, match="norm"):
            fn(x, norm="bogus")
        for dt in (ts.int32, ts.int64, ts.bool):  # promoted to the default float (torch)
            assert ts.isdtype(fn(x.astype(dt)).dtype, ("real floating", "complex floating"))
        with pytest.raises(ValueError):
            fn(ts.asarray(1.0))
        with pytest.raises((ValueError, IndexError)):
            fn(x, axis=1)
    for fn in (ts.fft.rfft, ts.fft.ihfft, ts.fft.rfftn):
        with pytest.raises(TypeError, match="real"):
            fn(x.astype(ts.complex64))
    with pytest.raises(ValueError, match="number of data points"):
        ts.fft.irfft(ts.asarray(np.ones(1, complex)))  # default n = 2*(1-1) = 0
    with pytest.raises(ValueError, match="same length"):
        ts.fft.fftn(ts.asarray(np.ones((2, 2))), s=(2, 2), axes=(0,))
    with pytest.raises(ValueError):
        ts.fft.fftn(ts.asarray(np.ones((2, 2))), s=(2, 2, 2))
    with pytest.raises(ValueError):
        ts.fft.fftn(ts.asarray(np.ones(4)), s=(0,), axes=(0,))
    # torch promotes integer input to the default float and gives fftfreq(0) == []
    assert ts.fft.fftn(ts.asarray(np.ones(4, np.int64))).dtype == ts.complex64
    assert ts.fft.fftfreq(0).shape == (0,)
    with pytest.raises(TypeError):
        ts.fft.fftfreq(4, dtype=ts.int32)
    with pytest.raises(TypeError):
        ts.fft.fft(x, n=2.5)


def test_empty_batch():
    x = np.ones((0, 8))
    assert_same(ts.fft.fft(ts.asarray(x)), np.fft.fft(x))
    assert_same(ts.fft.rfft(ts.asarray(x)), np.fft.rfft(x))


def test_fft_functions_are_the_bindings():
    # issue 17: ts.fft's functions are the C++ bindings, with one signature for both forms
    import inspect
    import torch
    for name in ts.fft.__all__:
        assert type(getattr(ts.fft, name)).__name__ == "builtin_function_or_method", name
    param = inspect.signature(ts.fft.rfft).parameters["input"]  # the binding's real default:
    assert param.kind is param.KEYWORD_ONLY and param.default is Ellipsis  # "not given"
    x = np.arange(6.0).reshape(2, 3)
    t = torch.fft.fft2(torch.tensor(x), None, (0, 1), "ortho")
    assert_same(ts.fft.fft2(ts.asarray(x), None, (0, 1), "ortho", out=None), t.numpy())
    assert ts.fft.rfftfreq(0).shape == (1,) and np.isnan(ts.fft.rfftfreq(0).numpy()[0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'axsi'"):
        ts.fft.fft(ts.asarray(x), axsi=0)
    with pytest.raises(TypeError, match="multiple values for argument 'input'"):
        ts.fft.fft(ts.asarray(x), input=ts.asarray(x))
