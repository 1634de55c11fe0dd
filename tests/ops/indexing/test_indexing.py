"""Basic indexing: Tensor.__getitem__ / __setitem__ with ints, slices, ..., None (vs NumPy)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, arrays, assert_same, check, shapes, strided_views


@st.composite
def index_items(draw, shape):
    """A basic-index key for `shape`: ints (sometimes out of range), slices, ..., None."""
    items = []
    used = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, len(shape) + 2))):
        kind = draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
        size = shape[used] if used < len(shape) else 3
        if kind == "int":
            items.append(draw(st.integers(-size - 1, size)))
            used += 1
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-size - 3, size + 3))
            step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
            items.append(slice(draw(bound), draw(bound), draw(step)))
            used += 1
        elif kind == "none":
            items.append(None)
        elif not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


@st.composite
def indexed_arrays(draw, dtypes=("float32",)):
    dtype = draw(st.sampled_from(dtypes))
    a = draw(arrays(dtype, shapes(max_dims=4)))
    return strided_views(draw, a), draw(index_items(a.shape))


@given(indexed_arrays(ALL_DTYPES))
def test_getitem_matches_numpy(case):
    a, key = case
    check(lambda m, x: x[key], a)


@given(indexed_arrays())
def test_getitem_is_view(case):
    a, key = case
    try:
        want = a[key]
    except IndexError:
        return
    x = ts.asarray(a)
    got = x[key]
    assert got._storage_ptr() == x._storage_ptr()
    if want.size > 0:
        assert np.shares_memory(got.numpy(), x.numpy())


@st.composite
def setitem_cases(draw):
    dtype = draw(st.sampled_from(ALL_DTYPES))
    a = draw(arrays(dtype, shapes(max_dims=3, min_side=1)))
    key = draw(index_items(a.shape))
    try:
        sel = a[key].shape
    except IndexError:
        sel = ()
    # A value broadcastable to the selection: some dims set to 1, some leading dims dropped.
    vshape = [1 if draw(st.booleans()) else n for n in sel][draw(st.integers(0, len(sel))):]
    vdtype = draw(st.sampled_from(ALL_DTYPES))
    v = draw(arrays(vdtype, tuple(vshape), elements=st.integers(0, 1)))
    return a, key, v


@given(setitem_cases())
def test_setitem_matches_numpy(case):
    a, key, v = case
    want = a.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want[key] = v
    except (IndexError, ValueError):
        with pytest.raises((IndexError, ValueError)):
            ts.asarray(a.copy())[key] = ts.asarray(v)
        return
    x = ts.asarray(a.copy())
    version = x._version
    x[key] = ts.asarray(v)
    assert_same(x, want)
    if want[key].size > 0:
        assert x._version > version


def test_setitem_scalars_and_array_likes():
    x = ts.zeros((3, 4), dtype=ts.int32)
    x[1] = 5
    x[:, 0] = 2.7  # cast to int32 (truncates)
    x[2, 1:] = [7, 8, 9]
    x[0, ...] = np.array([1, 2, 3, 4])
    x[None, 1, -1] = np.ones((1, 1, 1), np.int64)  # extra leading 1s are dropped, as in NumPy
    want = np.zeros((3, 4), np.int32)
    want[1] = 5
    want[:, 0] = 2
    want[2, 1:] = [7, 8, 9]
    want[0] = [1, 2, 3, 4]
    want[1, -1] = 1
    assert_same(x, want)


def test_setitem_through_transposed_view_writes_base():
    base = ts.zeros((2, 3))
    t = base.mT
    t[1:, ::-1] = ts.asarray([[1.0, 2.0]])
    want = np.zeros((2, 3), np.float32)
    want.T[1:, ::-1] = [[1.0, 2.0]]
    assert_same(base, want)


def test_setitem_value_aliasing_the_target():
    a = np.arange(10.0)
    x = ts.asarray(a.copy())
    x[1:] = x[:-1]
    want = a.copy()
    want[1:] = want[:-1]
    assert_same(x, want)
    # The same bytes through a NumPy view (a different storage object); strided, so the copy
    # runs element by element and would cascade without the overlap check.
    b = np.arange(20.0)
    y = ts.asarray(b.copy())
    y[2::2] = y.numpy()[:-2:2]
    want = b.copy()
    want[2::2] = want[:-2:2].copy()
    assert_same(y, want)


def test_setitem_broadcast_error_and_readonly():
    x = ts.zeros((2, 3))
    with pytest.raises(ValueError):
        x[0] = ts.ones((4,))
    ro = np.zeros(3)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        ts.asarray(ro)[0] = 1.0
    with pytest.raises(TypeError):
        x[0] = object()


def test_int_like_keys():
    a = np.arange(24).reshape(2, 3, 4)
    x = ts.asarray(a)
    assert_same(x[np.int64(1), np.int32(-1)], a[1, -1])
    assert_same(x[ts.asarray(1), ts.asarray(2, dtype=ts.uint8)], a[1, 2])
    assert_same(x[1:np.int16(3)], a[1:3])
    assert_same(x[np.array(1), np.array(2, np.uint8)], a[np.array(1), np.array(2, np.uint8)])

    class Idx:
        def __index__(self):
            return 2

    assert_same(x[:, Idx()], a[:, 2])
    assert_same(x[:, slice(Idx(), None)], a[:, 2:])


def test_index_errors_name_axis_index_and_size():
    x = ts.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[0, 3]
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        x[-3]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        ts.asarray(1.0)[0]
    with pytest.raises(IndexError):
        x[2**70]
    assert_same(x[::2**62, 2**62:], np.zeros((2, 3), np.float32)[::2**62, 2**62:])
    assert_same(x[::-2**62], np.zeros((2, 3), np.float32)[::-2**62])
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError):
        x["a":]


@pytest.mark.parametrize("key", ["a", 1.5, (0, 1.5), (0, None, "b")])
def test_unsupported_keys_raise_index_error(key):
    x = ts.zeros((2, 3))
    with pytest.raises(IndexError, match="only integers, slices"):
        x[key]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[key] = 1.0


def test_zero_d_and_empty():
    a = np.float64(3.5) * np.ones(())
    x = ts.asarray(a)
    assert_same(x[()], a[()])
    assert_same(x[...], a[...])
    assert_same(x[None], a[None])
    e = np.zeros((0, 3))
    assert_same(ts.asarray(e)[:, 1], e[:, 1])
    assert_same(ts.asarray(e)[5:, ::-2], e[5:, ::-2])
    x[...] = 2
    assert x.item() == 2.0
