"""Tensor core: dtypes, attributes, NumPy exchange, views, the operators that exist."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, arrays, assert_same, check, shapes


def test_dtype_objects():
    assert ts.float32 == ts.float32 and ts.float32 != ts.float64
    assert hash(ts.int8) == hash(ts.int8)
    assert repr(ts.float32) == "dtype('float32')" and str(ts.int64) == "int64"
    assert len({ts.float32, ts.float32, ts.int8}) == 2
    for name in ALL_DTYPES + ["bfloat16"]:
        assert getattr(ts, name).name == name


@given(arrays("float32", shapes()))
def test_roundtrip_numpy_shares_memory(a):
    t = ts.asarray(a)
    assert t.shape == a.shape and t.dtype == ts.float32
    back = np.asarray(t)
    if a.size:
        assert np.shares_memory(back, a)
    np.testing.assert_array_equal(back, a)


def test_attributes():
    t = ts.asarray(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and t.numel() == 24
    assert t.itemsize == 4 and t.nbytes == 96 and t.strides == (48, 16, 4)
    assert t.is_contiguous() and not t.mT.is_contiguous()
    assert t.mT.shape == (2, 4, 3) and len(t) == 2
    assert ts.asarray([[1, 2], [3, 4]]).T.tolist() == [[1, 3], [2, 4]]


def test_python_scalar_defaults():
    assert ts.asarray(1.5).dtype == ts.float32
    assert ts.asarray(2).dtype == ts.int64
    assert ts.asarray(True).dtype == ts.bool
    assert ts.asarray([1.0, 2.0]).dtype == ts.float32
    assert ts.asarray([1, 2]).dtype == ts.int64
    assert ts.asarray([1 + 2j]).dtype == ts.complex64


def test_weak_scalars():
    x = ts.asarray(np.ones(3, np.float16))
    assert (x + 1.5).dtype == ts.float16
    assert (ts.asarray(np.ones(3, np.int8)) + 300).dtype == ts.int8
    assert (ts.asarray(np.ones(3, np.int32)) + 1.5).dtype == ts.float32
    assert (ts.asarray(np.ones(3, np.float32)) + 1j).dtype == ts.complex64
    assert (ts.asarray(np.ones(3, np.float64)) + 1j).dtype == ts.complex128


@given(st.sampled_from(["add", "subtract", "multiply", "divide"]),
       arrays("float32", shapes(max_dims=3)), arrays("float32", shapes(max_dims=3)))
def test_arith_broadcast(op, a, b):
    check(lambda m, x, y: getattr(m, op)(x, y), a, b)


def test_inplace_writes_through_views():
    base = ts.zeros((3, 4))
    v = base.mT
    v += ts.asarray([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(base.numpy(), np.array([[1.0] * 4, [2.0] * 4, [3.0] * 4]))
    with pytest.raises(TypeError, match="can't be cast"):
        y = ts.zeros(3, dtype=ts.int32)
        y += 1.5


def test_errors_name_the_op():
    with pytest.raises(ValueError, match=r"matmul: shapes \(3, 4\) and \(5, 6\) are not aligned"):
        ts.ones((3, 4)) @ ts.ones((5, 6))
    with pytest.raises(ValueError, match="add: shapes"):
        ts.ones((2, 3)) + ts.ones((4,))
    with pytest.raises(TypeError, match="subtract"):
        ts.asarray([True]) - ts.asarray([False])


@given(st.sampled_from(["float32", "float64", "complex64", "int32"]), st.integers(0, 4),
       st.integers(0, 4), st.integers(0, 4), st.booleans(), st.booleans())
def test_matmul(dt, m, k, n, ta, tb):
    a = (np.random.default_rng(0).standard_normal((m, k)) * 3).astype(dt)
    b = (np.random.default_rng(1).standard_normal((k, n)) * 3).astype(dt)
    if ta:
        a = np.ascontiguousarray(a.T).T
    if tb:
        b = np.ascontiguousarray(b.T).T
    check(lambda mod, x, y: mod.matmul(x, y), a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2)), ((0, 3), (3, 2))])
def test_matmul_shapes(sa, sb):
    rng = np.random.default_rng(0)
    check(lambda m, x, y: m.matmul(x, y), rng.standard_normal(sa), rng.standard_normal(sb))


def test_large_blocks_are_cached_and_reused():
    ts._C._cpu_empty_cache()
    x = ts.ones(1 << 20)  # 4 MiB
    ptr = x.data_ptr()
    del x
    assert ts._C._cpu_cached_bytes() >= 4 << 20
    y = ts.zeros(1 << 20)
    assert y.data_ptr() == ptr and float(y.numpy().max()) == 0.0  # reused and re-initialized
    ts._C._cpu_empty_cache()
    assert ts._C._cpu_cached_bytes() == 0
