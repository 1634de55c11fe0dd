"""Tests of the vectorized fast paths: float32 exp/tanh (Note [fast float32 math]), the SIMD
full reductions (Note [Lane-vector pairwise sum]) and the tiled, buffered walk of transposed
operands (Note [Tiled iteration]). Each compares against NumPy (float64 where it measures
accuracy) on the shapes and values where those paths have edges: lane and chunk boundaries,
NaN at every lane offset, odd tile remainders, negative strides, broadcasts, batches."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts


# ---- float32 exp / tanh over the whole float range
def _ulp_error(got32: np.ndarray, exact64: np.ndarray) -> float:
    """Largest |got - exact| in units of the float32 spacing at the exact value."""
    want32 = exact64.astype(np.float32)
    ok = np.isfinite(want32) & (want32 != 0)
    spacing = np.spacing(np.abs(want32[ok])).astype(np.float64)
    return float(np.max(np.abs(got32[ok].astype(np.float64) - exact64[ok]) / spacing))


def _all_float_bits(step: int) -> np.ndarray:
    """Every step-th float32 bit pattern: both signs, subnormals to the largest, inf and NaN."""
    bits = np.arange(0, 2 ** 32, step, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, -1e-38, 1e-20,
                    -1e-7, 0.625, -0.625, 8.99, 9.0, 9.01, -20.0, 88.7, -103.9, -104.5, 3e38,
                    -3e38], np.float32)
BOUND = {"exp": 2.0, "tanh": 3.0}  # measured on all 2^32 inputs: 1.01 and 2.57


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_fast_float32_whole_range(name):
    x = np.concatenate([_all_float_bits(4099), SPECIAL])
    with np.errstate(all="ignore"):
        exact = getattr(np, name)(x.astype(np.float64))
    got = getattr(ts, name)(ts.asarray(x)).numpy()
    assert _ulp_error(got, exact) <= BOUND[name]
    # NaN, inf and zero results (with their signs) exactly as float64 NumPy rounded to float32
    want32 = exact.astype(np.float32)
    special = ~(np.isfinite(want32) & (want32 != 0))
    np.testing.assert_array_equal(got[special], want32[special])
    signed = special & ~np.isnan(want32)  # a NaN's sign bit carries no meaning
    assert np.array_equal(np.signbit(got[signed]), np.signbit(want32[signed]))


def test_ulp_metric_catches_a_1e3_error():
    """The accuracy test above would fail for an approximation 1e-3 off (it is not vacuous)."""
    x = np.linspace(-5, 5, 10_001).astype(np.float32)
    exact = np.tanh(x.astype(np.float64))
    wrong = (exact * (1 + 1e-3)).astype(np.float32)
    assert _ulp_error(wrong, exact) > 1000


@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_fast_float32_layouts_agree(name):
    """Strided, negative-step and broadcast inputs give the contiguous result bit for bit."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((37, 301)) * 4).astype(np.float32)
    f = getattr(ts, name)
    full = f(ts.asarray(x)).numpy()
    t = ts.asarray(x)
    np.testing.assert_array_equal(f(t[:, ::-3]).numpy(), full[:, ::-3])
    np.testing.assert_array_equal(f(t.T).numpy(), full.T)
    np.testing.assert_array_equal(f(ts.broadcast_to(t[3], (5, 301))).numpy(),
                                  np.broadcast_to(full[3], (5, 301)))
    np.testing.assert_array_equal(f(t[5, 7]).numpy(), full[5, 7])  # 0-d


# ---- SIMD full reductions
SIZES = [1, 3, 31, 32, 63, 64, 65, 127, 128, 1000, 1023, 1024, 1025, 4097, 32767, 32768, 32769,
         100_003, (1 << 20) + 5]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", SIZES)
def test_contiguous_sum_max_min(dtype, n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(dtype)
    t = ts.asarray(x)
    assert float(ts.max(t)) == x.max()
    assert float(ts.min(t)) == x.min()
    exact = float(np.sum(x.astype(np.float64)))
    tol = (4e-6 if dtype == "float32" else 1e-14) * float(np.sum(np.abs(x.astype(np.float64))))
    assert abs(float(ts.sum(t)) - exact) <= tol
    assert ts.sum(t).dtype == getattr(ts, dtype)
    assert abs(float(ts.mean(t)) - exact / n) <= tol / n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_min_nan_at_every_lane_offset(dtype):
    n = 64 * 3 + 17  # three full lane sets (of 64 float32 / 32 float64) and a tail
    base = np.arange(n, dtype=dtype)
    for pos in range(n):
        x = base.copy()
        x[pos] = np.nan
        t = ts.asarray(x)
        assert np.isnan(float(ts.max(t))), pos
        assert np.isnan(float(ts.min(t))), pos
        assert np.isnan(float(ts.sum(t))), pos


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_min_infinities_and_extremes_anywhere(dtype):
    n = 300
    for pos in (0, 1, 15, 16, 63, 64, 255, 256, 299):
        x = np.zeros(n, dtype)
        x[pos] = np.inf
        assert float(ts.max(ts.asarray(x))) == np.inf
        x[pos] = -np.inf
        assert float(ts.min(ts.asarray(x))) == -np.inf
        x[:] = -np.inf
        assert float(ts.max(ts.asarray(x))) == -np.inf
        x[pos] = 7.0
        assert float(ts.max(ts.asarray(x))) == 7.0


def test_simd_reductions_thread_count_and_layout():
    """Results are bit-identical for any thread count, and a strided walk of the same values
    agrees with NumPy (it takes the generic pairwise path)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal(3 * (1 << 18) + 11).astype(np.float32)
    t = ts.asarray(x)
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        one = [float(f(t)) for f in (ts.sum, ts.max, ts.min)]
        ts.set_num_threads(max(2, n))
        many = [float(f(t)) for f in (ts.sum, ts.max, ts.min)]
    finally:
        ts.set_num_threads(n)
    assert one == many
    s = ts.asarray(x)[::-2]
    assert float(ts.max(s)) == x[::-2].max()
    assert abs(float(ts.sum(s)) - float(np.sum(x[::-2].astype(np.float64)))) < 1e-3


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("chunk", [0, 5, 127])
def test_streamed_sum_matches_cached_sum(dtype, chunk):
    """Note [Streamed sums]: a run past 4 MiB sums each 2^15-element chunk leaf by leaf, a
    shorter one four leaves at a time; both must form the same tree. With one chunk of random
    values among zeros, the long run's sum is exactly that chunk's own (cached) sum."""
    c = 1 << 15
    vals = np.random.default_rng(chunk).standard_normal(c).astype(dtype)
    big = np.zeros(128 * c, dtype)
    big[chunk * c:(chunk + 1) * c] = vals
    assert big.nbytes > 4 << 20
    cached = ts.sum(ts.asarray(vals)).item()
    assert ts.sum(ts.asarray(big)).item() == cached
    assert ts.sum(ts.asarray(big.reshape(4, -1)), axis=1).numpy()[chunk // 32] == cached


def test_float32_sum_of_a_constant_is_accurate():
    x = ts.full((1 << 24,), 0.1, dtype=ts.float32)
    exact = (1 << 24) * float(np.float32(0.1))
    assert abs(float(ts.sum(x)) - exact) / exact < 1e-6


# ---- tiled, buffered walk of transposed operands
def _mat(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(16, 16), (17, 33), (64, 64), (100, 257), (257, 100),
                                   (2049, 31), (31, 2049), (513, 513)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_add_transposed_shapes(shape, dtype):
    a = _mat(shape, dtype)
    b = _mat(shape[::-1], dtype, 1)
    got = (ts.asarray(a) + ts.asarray(b).T).numpy()
    np.testing.assert_array_equal(got, a + b.T)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "uint16", "int32", "int64", "float16",
                                   "float32", "float64", "complex64", "complex128"])
def test_transposed_copy_every_itemsize(dtype):
    a = _mat((67, 45), dtype)
    t = ts.asarray(a)
    np.testing.assert_array_equal(t.T.contiguous().numpy(), np.ascontiguousarray(a.T))
    np.testing.assert_array_equal(ts.asarray(a.T.copy()).numpy(), a.T)
    if dtype != "bool":
        np.testing.assert_array_equal((t.T * 2).numpy(), a.T * 2)


def test_transposed_negative_strides_and_steps():
    a = _mat((96, 130), "float32")
    b = _mat((130, 96), "float32", 1)
    ta, tb = ts.asarray(a), ts.asarray(b)
    np.testing.assert_array_equal((ta[::-1] + tb.T).numpy(), a[::-1] + b.T)
    np.testing.assert_array_equal((ta + tb[::-1, ::-1].T).numpy(), a + b[::-1, ::-1].T)
    np.testing.assert_array_equal((ta[:, ::2] + tb[::2].T).numpy(), a[:, ::2] + b[::2].T)
    np.testing.assert_array_equal((ta[::-3, 1::3] - tb[1::3, ::-3].T).numpy(),
                                  a[::-3, 1::3] - b[1::3, ::-3].T)


def test_transposed_with_broadcast_operands():
    a = _mat((70, 90), "float32")
    row = _mat((70,), "float32", 2)
    col = _mat((90, 1), "float32", 3)
    ta = ts.asarray(a)
    np.testing.assert_array_equal((ta.T + ts.asarray(row)).numpy(), a.T + row)
    np.testing.assert_array_equal((ts.asarray(col) + ta.T).numpy(), col + a.T)
    np.testing.assert_array_equal((ta.T * 3.0).numpy(), a.T * np.float32(3.0))
    cond = _mat((90, 70), "bool", 4)
    np.testing.assert_array_equal(ts.where(ts.asarray(cond).T, ta, ts.asarray(a.T.copy()).T).numpy(),
                                  np.where(cond.T, a, a))


@pytest.mark.parametrize("shape", [(3, 40, 40), (2, 33, 65), (4, 128, 17)])
def test_batched_transpose(shape):
    x = _mat(shape, "float32")
    y = _mat(shape[:1] + shape[:0:-1], "float32", 1)
    tx, ty = ts.asarray(x), ts.asarray(y)
    np.testing.assert_array_equal((tx + ty.mT).numpy(), x + np.swapaxes(y, -1, -2))
    np.testing.assert_array_equal(ty.mT.contiguous().numpy(), np.swapaxes(y, -1, -2))
    p = ts.permute_dims(tx, (2, 1, 0))
    np.testing.assert_array_equal((p + 1).numpy(), np.transpose(x, (2, 1, 0)) + 1)


def test_in_place_add_of_a_transpose():
    a = _mat((80, 80), "float64")
    b = _mat((80, 80), "float64", 1)
    t = ts.asarray(a.copy())
    t += ts.asarray(b).T
    np.testing.assert_array_equal(t.numpy(), a + b.T)
    s = ts.asarray(a.copy())
    s += s.T  # the operand overlaps the output
    np.testing.assert_array_equal(s.numpy(), a + a.T)


def test_tiled_thread_count_independence():
    a = _mat((300, 500), "float32")
    t = ts.asarray(a)
    n = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        one = (t.T + ts.tanh(t).T).numpy()
        ts.set_num_threads(max(2, n))
        many = (t.T + ts.tanh(t).T).numpy()
    finally:
        ts.set_num_threads(n)
    np.testing.assert_array_equal(one, many)


@pytest.mark.parametrize("name", ["exp", "tanh"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fast_16bit_types_round_the_float32_result_once(name, dtype):
    """float16/bfloat16 go through the same float32 loop and round its result once."""
    rng = np.random.default_rng(5)
    x32 = (rng.standard_normal(1000) * 3).astype(np.float32)
    x = ts.asarray(x32).astype(getattr(ts, dtype))
    f = getattr(ts, name)
    got = f(x)
    assert got.dtype == getattr(ts, dtype)
    want = f(x.astype(ts.float32)).astype(getattr(ts, dtype))
    np.testing.assert_array_equal(got.astype(ts.float32).numpy(), want.astype(ts.float32).numpy())
    strided = f(x[::-2]).astype(ts.float32).numpy()
    np.testing.assert_array_equal(strided, want.astype(ts.float32).numpy()[::-2])
