"""dtypes, the promotion table (exhaustively), result_type, can_cast, finfo, iinfo, isdtype."""
import itertools

import ml_dtypes
import numpy as np
import pytest
import torch

import tessera as ts
from harness import ALL_DTYPES

NAMES = ALL_DTYPES + ["bfloat16"]
INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}
FLOATS = {"float16", "bfloat16", "float32", "float64"}


def expected_promotion(a: str, b: str) -> str:
    """The array API table for same-kind pairs (NumPy agrees there), PyTorch's rule for mixed
    int/float and for bfloat16 (the float operand's dtype; float16+bfloat16 -> float32)."""
    if a in INTS and b not in INTS and b != "bool":
        return b
    if b in INTS and a not in INTS and a != "bool":
        return a
    if "bfloat16" in (a, b):
        return str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
    return np.promote_types(a, b).name


@pytest.mark.parametrize("a,b", [(i, f) for i in ["int8", "int16", "int32", "int64", "uint8"]
                                 for f in ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]])
def test_mixed_int_float_is_pytorchs_rule(a, b):
    want = str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
    assert ts.result_type(getattr(ts, a), getattr(ts, b)).name == want


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promotion_table(a, b):
    want = expected_promotion(a, b)
    got = ts.result_type(getattr(ts, a), getattr(ts, b))
    assert got.name == want, f"{a} + {b}: {got} != {want}"
    # symmetric, and what the arithmetic actually produces
    assert ts.result_type(getattr(ts, b), getattr(ts, a)) == got


@pytest.mark.parametrize("a,b", [("int8", "uint8"), ("float32", "int64"), ("float16", "bfloat16"),
                                 ("uint64", "int64"), ("complex64", "float64"), ("bool", "int8")])
def test_arithmetic_follows_table(a, b):
    x = ts.ones(2, dtype=getattr(ts, a))
    y = ts.ones(2, dtype=getattr(ts, b))
    assert (x * y).dtype == ts.result_type(x, y)


@pytest.mark.parametrize("name", NAMES)
def test_weak_scalars_keep_dtype(name):
    d = getattr(ts, name)
    assert ts.result_type(d, True) == d
    if name != "bool":
        assert ts.result_type(d, 1) == d
    else:
        assert ts.result_type(d, 1) == ts.int64
    if name in FLOATS or name.startswith("complex"):
        assert ts.result_type(d, 1.0) == d
    else:
        assert ts.result_type(d, 1.0) == ts.float32


def test_result_type_mixes_tensors_and_dtypes():
    assert ts.result_type(ts.ones(2, dtype=ts.int8), ts.uint8, 1) == ts.int16
    with pytest.raises(ValueError):
        ts.result_type()


@pytest.mark.parametrize("a,b", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_can_cast_matches_numpy_safe(a, b):
    assert ts.can_cast(getattr(ts, a), getattr(ts, b)) == np.can_cast(a, b, "safe"), (a, b)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo(name):
    f, n = ts.finfo(getattr(ts, name)), np.finfo(name)
    assert f.bits == n.bits and f.eps == float(n.eps) and f.max == float(n.max)
    assert f.min == float(n.min) and f.smallest_normal == float(n.smallest_normal)
    assert f.dtype == getattr(ts, name)


def test_finfo_bfloat16_and_complex():
    f, n = ts.finfo(ts.bfloat16), ml_dtypes.finfo(ml_dtypes.bfloat16)
    assert f.eps == float(n.eps) and f.max == float(n.max) and f.smallest_normal == float(n.smallest_normal)
    assert ts.finfo(ts.complex64).dtype == ts.float32 and ts.finfo(ts.complex128).bits == 64
    with pytest.raises(TypeError, match="finfo"):
        ts.finfo(ts.int32)


@pytest.mark.parametrize("name", sorted(INTS))
def test_iinfo(name):
    i, n = ts.iinfo(getattr(ts, name)), np.iinfo(name)
    assert (i.bits, i.max, i.min) == (n.bits, int(n.max), int(n.min))
    with pytest.raises(TypeError, match="iinfo"):
        ts.iinfo(ts.float32)


def test_isdtype():
    assert ts.isdtype(ts.int8, "signed integer") and not ts.isdtype(ts.uint8, "signed integer")
    assert ts.isdtype(ts.float16, "real floating") and ts.isdtype(ts.complex64, "complex floating")
    assert ts.isdtype(ts.uint64, ("bool", "integral")) and ts.isdtype(ts.bool, ts.bool)
    assert not ts.isdtype(ts.bool, "numeric")
    with pytest.raises(ValueError, match="unknown kind"):
        ts.isdtype(ts.int8, "whatever")
    with pytest.raises(TypeError):
        ts.isdtype(np.int8, "integral")


@pytest.mark.parametrize("src,dst", list(itertools.product(ALL_DTYPES, ALL_DTYPES)))
def test_astype_matches_numpy(src, dst):
    vals = np.array([0, 1, 2, 3, 7, 100], dtype=np.int64)
    if src == "bool":
        vals = vals % 2
    a = vals.astype(src)
    got = ts.astype(ts.asarray(a), getattr(ts, dst))
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = a.astype(dst)
    assert got.dtype.name == dst
    np.testing.assert_array_equal(got.numpy(), want)


def test_astype_copy_semantics():
    x = ts.ones(3)
    assert ts.astype(x, ts.float32, copy=False) is x
    y = ts.astype(x, ts.float32)
    assert y is not x and y.data_ptr() != x.data_ptr()


def test_half_rounding_matches_numpy():
    v = np.array([0.1, 65504.0, 65519.9, 65520.0, 1e-8, 5.96e-8, 2.9e-8, 3e-8, -0.0, np.inf, np.nan,
                  1.0009765625, 1.00048828125, 1.00146484375], dtype=np.float32)
    got = ts.astype(ts.asarray(v), ts.float16).numpy()
    np.testing.assert_array_equal(got.view(np.uint16), v.astype(np.float16).view(np.uint16))
    got_b = ts.astype(ts.asarray(v), ts.bfloat16).numpy()
    want_b = v.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got_b.view(np.uint16)[~np.isnan(v)], want_b.view(np.uint16)[~np.isnan(v)])
    assert np.isnan(got_b.astype(np.float32)[np.isnan(v)]).all()


def test_half_rounding_exhaustive_float32_sample():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=200_000, dtype=np.uint64).astype(np.uint32)
    v = bits.view(np.float32)
    v = v[~np.isnan(v)]
    got = ts.astype(ts.asarray(v), ts.float16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got, v.astype(np.float16).view(np.uint16))
    got_b = ts.astype(ts.asarray(v), ts.bfloat16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got_b, v.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_namespace_info():
    info = ts.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == ts.float32
    assert info.default_dtypes()["indexing"] == ts.int64
    assert info.default_device() == ts.Device("cpu")
    assert set(info.dtypes(kind="integral")) == INTS
    assert "boolean indexing" in info.capabilities()
    assert ts.__array_api_version__ == "2024.12"
    assert ts.ones(2).__array_namespace__() is ts


def test_float64_to_float16_rounds_once_like_numpy():
    # Near every float16 halfway point, a rounding through float32 first would round twice
    # (65519.99999 -> 65520.0 -> inf); NumPy rounds once.
    rng = np.random.default_rng(1)
    h = rng.integers(0, 0x7BFF, 20_000).astype(np.uint16).view(np.float16)
    lo, hi = h.astype(np.float64), np.nextafter(h, np.float16(np.inf)).astype(np.float64)
    mid = (lo + hi) / 2
    v = np.concatenate([mid, mid * (1 + 2**-40), mid * (1 - 2**-40), -mid * (1 + 2**-45),
                        [65519.99999, 65520.0, 1 + 2**-11 + 2**-40, 1e-300, 5e-324, -0.0, np.inf]])
    got = ts.astype(ts.asarray(v), ts.float16).numpy()
    np.testing.assert_array_equal(got.view(np.uint16), v.astype(np.float16).view(np.uint16))
    assert np.isnan(ts.astype(ts.asarray([np.nan]), ts.float16).numpy()).all()
