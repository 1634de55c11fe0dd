"""Elementwise ops whose inputs run across the output's memory order (a + a.T): the tiled walk
of Note [Tiled iteration], for outputs of 8 MiB and more its streamed stores (Note [Streaming
tile stores]), the mirrored tile order of a + a.T (Note [Mirrored tiles]) and the transposing
copy (Note [Transposing copy]). Differential against NumPy at tile edges, misaligned rows, every
dtype family, in place, and for any thread count."""
import numpy as np
import pytest

import tessera as ts

STREAM_BYTES = 8 << 20  # ElementwiseIter::kStreamBytes


def _values(shape, dtype, rng):
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 100, shape).astype(dtype)
    if np.dtype(dtype).kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(16, 16), (17, 300), (129, 257), (600, 530), (1, 40, 70)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "complex64", "bool"])
def test_plus_transpose_matches_numpy_at_tile_edges(shape, dtype):
    rng = np.random.default_rng(0)
    a = _values(shape, dtype, rng)
    b = _values(shape[:-2] + shape[-2:][::-1], dtype, rng)
    bt = np.swapaxes(b, -1, -2)
    op = np.logical_xor if dtype == "bool" else np.add
    got = (ts.logical_xor if dtype == "bool" else ts.add)(ts.asarray(a), ts.matrix_transpose(ts.asarray(b)))
    np.testing.assert_array_equal(np.asarray(got), op(a, bt))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("offset", [(0, 0), (1, 3), (2, 5)])
def test_streamed_output_matches_numpy_with_misaligned_rows(dtype, offset):
    """Outputs past the streaming threshold; sliced views put row starts off the 64-byte lines,
    so each row mixes plain head/tail stores with streamed whole lines."""
    rng = np.random.default_rng(1)
    rows = 2048 if dtype == "float32" else 1100
    cols = STREAM_BYTES // (rows * np.dtype(dtype).itemsize) + 7
    i, j = offset
    a_np = _values((rows + i, cols + j), dtype, rng)[i:, j:]
    b_np = _values((cols + j, rows + i), dtype, rng)[j:, i:]
    assert a_np.nbytes >= STREAM_BYTES
    a, b = ts.asarray(a_np), ts.asarray(b_np)
    for f, g in [(ts.add, np.add), (ts.multiply, np.multiply), (ts.subtract, np.subtract),
                 (ts.divide, np.divide)]:
        np.testing.assert_array_equal(np.asarray(f(a, b.T)), g(a_np, b_np.T))
    # a non-streaming output type beside it (bool) in the same walk shape
    np.testing.assert_array_equal(np.asarray(ts.less(a, b.T)), np.less(a_np, b_np.T))


def test_streamed_output_keeps_nan_and_inf():
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal((2048, 1100)).astype(np.float32)
    a_np[::7, ::5] = np.nan
    a_np[3::11, 1::13] = np.inf
    b_np = rng.standard_normal((1100, 2048)).astype(np.float32)
    a, b = ts.asarray(a_np), ts.asarray(b_np)
    np.testing.assert_array_equal(np.asarray(ts.maximum(a, b.T)), np.maximum(a_np, b_np.T))
    np.testing.assert_array_equal(np.asarray(a + b.T), a_np + b_np.T)


def test_streamed_in_place_add_of_a_transpose():
    rng = np.random.default_rng(3)
    x_np = rng.standard_normal((2048, 1100)).astype(np.float32)
    y_np = rng.standard_normal((1100, 2048)).astype(np.float32)
    x = ts.asarray(x_np.copy())
    x += ts.asarray(y_np).T
    np.testing.assert_array_equal(np.asarray(x), x_np + y_np.T)


def test_square_self_transpose_in_place():
    """x += x.T reads what it writes; the result must be the out-of-place one."""
    rng = np.random.default_rng(4)
    x_np = rng.standard_normal((1500, 1500)).astype(np.float32)
    x = ts.asarray(x_np.copy())
    x += x.T
    np.testing.assert_array_equal(np.asarray(x), x_np + x_np.T)


def test_batched_streamed_transpose():
    rng = np.random.default_rng(5)
    a_np = rng.standard_normal((5, 640, 700)).astype(np.float32)
    b_np = rng.standard_normal((5, 700, 640)).astype(np.float32)
    assert a_np.nbytes >= STREAM_BYTES
    got = ts.asarray(a_np) + ts.matrix_transpose(ts.asarray(b_np))
    np.testing.assert_array_equal(np.asarray(got), a_np + np.swapaxes(b_np, -1, -2))


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(6)
    a = ts.asarray(rng.standard_normal((2048, 1030)).astype(np.float32))
    b = ts.asarray(rng.standard_normal((1030, 2048)).astype(np.float32))
    old = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        one = np.asarray(a * b.T + a).copy()
        ts.set_num_threads(2)
        two = np.asarray(a * b.T + a).copy()
    finally:
        ts.set_num_threads(old)
    np.testing.assert_array_equal(one, two)


# Note [Mirrored tiles]: an input that is another input transposed (same memory) walks square
# tiles in mirrored pairs. Sizes that are not a whole number of tiles (float32: 128, float64:
# 64, complex128: 32) leave partial tiles on both edges of the pair.
@pytest.mark.parametrize("n", [16, 100, 128, 257, 700])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "complex128", "bool"])
def test_self_transpose_matches_numpy(n, dtype):
    rng = np.random.default_rng(7)
    a_np = _values((n, n), dtype, rng)
    a = ts.asarray(a_np)
    if dtype == "bool":
        np.testing.assert_array_equal(np.asarray(ts.logical_xor(a, a.T)), a_np ^ a_np.T)
        return
    np.testing.assert_array_equal(np.asarray(a + a.T), a_np + a_np.T)
    np.testing.assert_array_equal(np.asarray(a.T - a), a_np.T - a_np)


@pytest.mark.parametrize("n", [300, 2048])
def test_self_transpose_mirrors_under_views_and_batches(n):
    rng = np.random.default_rng(8)
    a_np = rng.standard_normal((3, n, n)).astype(np.float32)
    a = ts.asarray(a_np)
    sym = np.asarray((a + a.mT) * 0.5)
    np.testing.assert_array_equal(sym, (a_np + np.swapaxes(a_np, -1, -2)) * np.float32(0.5))
    # reversed rows: still one input seen through the other's swapped strides
    r, r_np = a[:, ::-1, ::-1], a_np[:, ::-1, ::-1]
    np.testing.assert_array_equal(np.asarray(r - r.mT), r_np - np.swapaxes(r_np, -1, -2))
    # a square window of a larger matrix, and a batch broadcast against it
    w, w_np = a[1, 5:n - 3, 5:n - 3], a_np[1, 5:n - 3, 5:n - 3]
    np.testing.assert_array_equal(np.asarray(w * w.T), w_np * w_np.T)
    np.testing.assert_array_equal(np.asarray(ts.where(w > 0, w, w.T)), np.where(w_np > 0, w_np, w_np.T))


def test_self_transpose_results_do_not_depend_on_thread_count():
    a = ts.asarray(np.random.default_rng(9).standard_normal((1500, 1500)).astype(np.float32))
    old = ts.get_num_threads()
    try:
        ts.set_num_threads(1)
        one = np.asarray(a + a.T).copy()
        ts.set_num_threads(2)
        two = np.asarray(a + a.T).copy()
    finally:
        ts.set_num_threads(old)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(one, one.T)


# Note [Transposing copy]: same-type copies of a transposed input write the output tile by tile
# with no buffer; streamed (past STREAM_BYTES) only where the output rows are 64-byte aligned.
@pytest.mark.parametrize("shape", [(16, 16), (17, 300), (129, 257), (2048, 1100), (3, 130, 70)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16", "complex128", "bool"])
def test_transposing_copy_matches_numpy(shape, dtype):
    a_np = _values(shape, dtype, np.random.default_rng(10))
    a = ts.asarray(a_np)
    got = ts.matrix_transpose(a).contiguous()
    assert got.is_contiguous()
    np.testing.assert_array_equal(np.asarray(got), np.swapaxes(a_np, -1, -2))
    flipped = ts.matrix_transpose(a[..., ::-1, :]).contiguous()
    np.testing.assert_array_equal(np.asarray(flipped), np.swapaxes(a_np[..., ::-1, :], -1, -2))


@pytest.mark.parametrize("rows,cols", [(2048, 1100), (300, 200)])
@pytest.mark.parametrize("offset", [(0, 0), (2, 1), (1, 16)])
def test_transposing_copy_into_a_window(rows, cols, offset):
    """Assignment of a transpose into a window of a larger tensor: output rows start off the
    64-byte lines (offset) or keep them (the (0, 0) and column-16 cases)."""
    a_np = _values((rows, cols), "float32", np.random.default_rng(11))
    i, j = offset
    out_np = np.zeros((cols + 4, rows + 32), np.float32)
    out = ts.asarray(out_np.copy())
    out[i:i + cols, j:j + rows] = ts.asarray(a_np).T
    out_np[i:i + cols, j:j + rows] = a_np.T
    np.testing.assert_array_equal(np.asarray(out), out_np)


def test_transposing_copy_of_itself_in_place():
    """x[...] = x.T overlaps its own input: the result must be that of a copy taken first."""
    x_np = _values((300, 300), "float32", np.random.default_rng(12))
    x = ts.asarray(x_np.copy())
    x[...] = x.T
    np.testing.assert_array_equal(np.asarray(x), x_np.T)
