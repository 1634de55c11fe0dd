"""Creation functions (arange, linspace, eye, tril/triu, meshgrid, zeros/ones/full/empty, *_like,
asarray/tensor) vs NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, INT_DTYPES, arrays, assert_same, check, check_torch, shapes, strided_views

REAL_DTYPES = INT_DTYPES + ["float16", "float32", "float64"]


@given(st.integers(-50, 50), st.one_of(st.none(), st.integers(-50, 50)),
       st.integers(-7, 7).filter(lambda s: s != 0))
def test_arange_ints_exact(start, stop, step):
    got = ts.arange(start, stop, step) if stop is not None else ts.arange(start)
    want = np.arange(start, stop, step) if stop is not None else np.arange(start)
    assert_same(got, want.astype(np.int64))


@given(st.floats(-100, 100), st.floats(-100, 100), st.floats(0.01, 10), st.booleans())
def test_arange_floats(start, stop, step, neg):
    step = -step if neg else step
    want = np.arange(start, stop, step)
    got = ts.arange(start, stop, step)
    assert got.dtype == ts.float32
    assert got.shape == want.shape  # NumPy's length rule ceil((stop - start) / step)
    # tessera computes start + i * step in double (NumPy steps by (start + step) - start,
    # which drifts by ~1e-12 over long ranges): compare with that exact formula.
    exact = start + np.arange(want.shape[0]) * step
    assert_same(got, exact.astype(np.float32), rtol=0, atol=0)
    assert_same(ts.arange(start, stop, step, dtype=ts.float64), exact, rtol=0, atol=0)
    assert_same(got, want.astype(np.float32), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_arange_dtypes(dtype):
    assert_same(ts.arange(1, 20, 3, dtype=dtype), np.arange(1, 20, 3, dtype=dtype))
    assert_same(ts.arange(5, dtype=dtype), np.arange(5, dtype=dtype))


def test_arange_mixed_and_errors():
    assert_same(ts.arange(0, 2, 0.5), np.arange(0, 2, 0.5, dtype=np.float32))
    assert_same(ts.arange(np.int32(3)), np.arange(3))
    assert_same(ts.arange(ts.asarray(4)), np.arange(4))
    assert ts.arange(10, 0).shape == (0,)
    assert ts.arange(2**40, 2**40 + 3)[2].item() == 2**40 + 2
    with pytest.raises(ValueError, match="step"):
        ts.arange(0, 5, 0)
    with pytest.raises(ValueError, match="step"):
        ts.arange(0.0, 5.0, 0.0)
    with pytest.raises(TypeError):
        ts.arange(0, 1j)
    with pytest.raises(TypeError):
        ts.arange(3, dtype=ts.bool)
    with pytest.raises(TypeError):
        ts.arange(3, dtype=ts.complex64)
    with pytest.raises(ValueError):
        ts.arange(0.0, float("inf"))
    with pytest.raises(TypeError):
        ts.arange("a")


@given(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.integers(0, 40), st.booleans())
def test_linspace_matches_numpy(start, stop, num, endpoint):
    want = np.linspace(start, stop, num, endpoint=endpoint)
    assert_same(ts.linspace(start, stop, num, endpoint=endpoint, dtype=ts.float64), want, rtol=0, atol=0)
    got = ts.linspace(start, stop, num, endpoint=endpoint)
    assert got.dtype == ts.float32
    assert_same(got, want.astype(np.float32), rtol=0, atol=0)
    if endpoint and num > 1:
        assert got[-1].item() == np.float32(stop)


def test_linspace_complex_and_errors():
    want = np.linspace(1 + 2j, -3j, 7)
    assert_same(ts.linspace(1 + 2j, -3j, 7), want.astype(np.complex64))
    assert_same(ts.linspace(1 + 2j, -3j, 7, dtype=ts.complex128, endpoint=False),
                np.linspace(1 + 2j, -3j, 7, endpoint=False))
    assert_same(ts.linspace(0, 1, 1), np.linspace(0, 1, 1).astype(np.float32))
    assert_same(ts.linspace(2, 2, 4, dtype=ts.float16), np.linspace(2, 2, 4, dtype=np.float16))
    with pytest.raises(ValueError):
        ts.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        ts.linspace(0, 1, 2.0)
    # integer dtypes follow torch (values truncated toward zero; tests/torch_api/test_call_forms_results.py)
    assert ts.linspace(0, 10, 5, dtype=ts.int32).tolist() == [0, 2, 5, 7, 10]
    with pytest.raises(TypeError):
        ts.linspace(0, 1j, 5, dtype=ts.float32)


@given(st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6)), st.integers(-7, 7),
       st.sampled_from(ALL_DTYPES))
def test_eye(n, m, k, dtype):
    assert_same(ts.eye(n, m, k=k, dtype=dtype), np.eye(n, m, k=k, dtype=dtype))


@given(st.integers(0, 4), st.integers(0, 4),
       st.one_of(st.integers(-2**70, 2**70), st.sampled_from([2**63, -2**63 - 1, 2**63 - 1, -2**63])))
def test_eye_any_python_int_offset(n, m, k):
    # The standard's k is any int: a diagonal past the matrix (beyond int64 too) is all zeros,
    # as in array_api_strict / NumPy.
    import array_api_strict as xps
    want = np.asarray(xps.eye(n, m, k=k, dtype=xps.float32))
    assert_same(ts.eye(n, m, k=k), want)


def test_eye_defaults_and_errors():
    assert_same(ts.eye(3), np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError):
        ts.eye(-1)
    with pytest.raises(ValueError):
        ts.eye(-1, -1, k=2**70)
    with pytest.raises(TypeError, match="eye: k must be an int"):
        ts.eye(3, k=1.5)
    with pytest.raises(TypeError, match="eye: k must be an int"):
        ts.eye(3, k=True)


@given(st.data(), st.sampled_from(ALL_DTYPES), st.integers(-6, 6))
def test_tril_triu(data, dtype, k):
    a = strided_views(data.draw, data.draw(arrays(dtype, shapes(min_dims=2, max_dims=4))))
    check(lambda m, x: m.tril(x, k=k), a)
    check(lambda m, x: m.triu(x, k=k), a)


def test_tril_triu_torch_alias_and_errors():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    check_torch(lambda m, x: m.tril(x, diagonal=1), a)
    check_torch(lambda m, x: m.triu(x, diagonal=-1), a)
    x = ts.asarray(a)
    assert not np.shares_memory(ts.tril(x).numpy(), a)
    with pytest.raises(ValueError, match="at least 2"):
        ts.tril(ts.zeros(3))
    with pytest.raises(TypeError):
        ts.triu(a)


@given(st.lists(st.integers(0, 4), max_size=4), st.sampled_from(["xy", "ij"]),
       st.sampled_from(ALL_DTYPES))
def test_meshgrid(sizes, indexing, dtype):
    arrs = [np.arange(n).astype(dtype) for n in sizes]
    got = ts.meshgrid(*[ts.asarray(a) for a in arrs], indexing=indexing)
    want = np.meshgrid(*arrs, indexing=indexing)
    assert isinstance(got, list)
    assert_same(got, want)


def test_meshgrid_views_and_errors():
    x = ts.arange(3)
    g = ts.meshgrid(x, ts.arange(2))
    assert g[0]._storage_ptr() == x._storage_ptr()
    with pytest.raises(ValueError):
        ts.meshgrid(x, indexing="xz")
    with pytest.raises(ValueError):
        ts.meshgrid(ts.zeros((2, 2)))


def test_tensor_always_copies():
    a = np.arange(3.0)
    t = ts.tensor(a)
    assert t.dtype == ts.float64 and not np.shares_memory(t.numpy(), a)
    x = ts.arange(3)
    y = ts.tensor(x, dtype=ts.float32)
    assert_same(y, np.arange(3, dtype=np.float32))
    assert ts.tensor(x)._storage_ptr() != x._storage_ptr()
    assert ts.tensor([[1, 2], [3, 4]]).dtype == ts.int64
    assert ts.tensor(1.5).dtype == ts.float32


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_filled_constructors(dtype):
    for shape in [(), (0,), (2, 3), 4]:
        assert_same(ts.zeros(shape, dtype=dtype), np.zeros(shape, dtype=dtype))
        assert_same(ts.ones(shape, dtype=dtype), np.ones(shape, dtype=dtype))
        assert_same(ts.full(shape, 1, dtype=dtype), np.full(shape, 1, dtype=dtype))
        e = ts.empty(shape, dtype=dtype)
        assert e.shape == np.empty(shape).shape and e.dtype.name == dtype
    x = ts.asarray(np.zeros((2, 1), dtype=dtype))
    assert_same(ts.ones_like(x), np.ones((2, 1), dtype=dtype))
    assert_same(ts.zeros_like(x, dtype=ts.int8), np.zeros((2, 1), dtype=np.int8))
    assert_same(ts.full_like(x, 1), np.full((2, 1), 1, dtype=dtype))
    assert ts.empty_like(x).shape == (2, 1)


def test_default_dtypes_and_errors():
    assert ts.zeros(3).dtype == ts.float32
    assert ts.full((2,), True).dtype == ts.bool
    assert ts.full((2,), 3).dtype == ts.int64
    assert ts.full((2,), 3.0).dtype == ts.float32
    assert ts.full((2,), 1j).dtype == ts.complex64
    assert ts.asarray(np.float64(2.0)).dtype == ts.float64
    assert ts.asarray(np.int16(2)).dtype == ts.int16
    with pytest.raises(ValueError):
        ts.zeros((2, -1))
    with pytest.raises(TypeError):
        ts.full((2,), "a")
    with pytest.raises(TypeError):
        ts.zeros("ab")


@pytest.mark.parametrize("make", [lambda d: ts.asarray([1.0], device=d), lambda d: ts.zeros(2, device=d),
                                  lambda d: ts.arange(3, device=d), lambda d: ts.linspace(0, 1, 3, device=d),
                                  lambda d: ts.eye(2, device=d), lambda d: ts.tensor([1], device=d)])
def test_device_argument(make):
    assert make("cpu").device == "cpu"
    assert make(None).device == "cpu"
    if not ts.build_config()["cuda"]:
        with pytest.raises(RuntimeError, match="cuda"):
            make("cuda")


def test_default_device_is_the_cpu_and_settable():
    assert ts.get_default_device() == ts.Device("cpu")
    assert ts.__array_namespace_info__().default_device() == ts.Device("cpu")
    ts.set_default_device("cpu")
    try:
        assert ts.zeros(2).device == ts.Device("cpu")
        assert ts.asarray([1, 2]).device == ts.Device("cpu")
    finally:
        ts.set_default_device(None)
    assert ts.get_default_device() == ts.Device("cpu")


def test_default_device_rejects_bad_names():
    with pytest.raises((ValueError, TypeError)):
        ts.set_default_device("tpu")
    with pytest.raises(TypeError):
        ts.set_default_device(3.5)
    assert ts.get_default_device() == ts.Device("cpu")


def test_creation_forms_are_one_definition_under_default_dtype():
    """zeros/ones/empty/rand/randn/arange/linspace take torch's forms (varargs sizes, size=,
    end=, steps=) and the default dtype in the one definition each (issue 17: the varargs and
    default-dtype wrappers were separate layers, and ts.random.rand ignored the default dtype)."""
    import torch
    old, told = ts.get_default_dtype(), torch.get_default_dtype()
    try:
        ts.set_default_dtype(ts.float64)
        torch.set_default_dtype(torch.float64)
        for name in ("zeros", "ones", "empty"):
            for args, kw in (((2, 3), {}), (((2, 3),), {}), ((), {"size": (2, 3)})):
                got, want = getattr(ts, name)(*args, **kw), getattr(torch, name)(*args, **kw)
                assert tuple(got.shape) == tuple(want.shape) and str(want.dtype).endswith(got.dtype.name)
        for fn, tfn in ((ts.rand, torch.rand), (ts.randn, torch.randn), (ts.random.rand, torch.rand)):
            assert fn(2, 3).dtype == ts.float64 and tfn(2, 3).dtype == torch.float64
            assert tuple(fn(size=(4,)).shape) == (4,)
        assert ts.arange(end=2.0).dtype == ts.float64
        assert ts.arange(start=1, end=4).tolist() == torch.arange(start=1, end=4).tolist()
        assert ts.linspace(0, 1, steps=5).tolist() == torch.linspace(0, 1, steps=5).tolist()
        assert ts.full((2,), 1.5).dtype == ts.float64
        assert ts.asarray([1.0, 2]).dtype == ts.float64
    finally:
        ts.set_default_dtype(old)
        torch.set_default_dtype(told)
    with pytest.raises(TypeError):
        ts.zeros(2, shape=(2,))
    with pytest.raises(TypeError):
        ts.rand(2, size=(2,))
