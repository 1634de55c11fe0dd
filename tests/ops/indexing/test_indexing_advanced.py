"""Advanced indexing (integer arrays, masks, mixtures) and the take/gather/scatter family,
differentially against NumPy and PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, arrays, assert_same, check, same_as_torch, shapes, strided_views


@st.composite
def adv_keys(draw, shape):
    """A key for `shape` mixing int arrays (some out of range, negative, broadcasting),
    masks, ints, slices (incl. negative steps), None and ...; as a tuple or a lone item."""
    items = []
    d = 0
    ellipsis = False
    bshape = draw(st.sampled_from([(), (0,), (1,), (2,), (3,), (2, 1), (1, 3)]))
    for _ in range(draw(st.integers(1, len(shape) + 1))):
        kinds = ["array", "array", "slice", "none", "int", "ellipsis"]
        if d < len(shape):
            kinds += ["mask", "mask1"]
        kind = draw(st.sampled_from(kinds))
        size = shape[d] if d < len(shape) else 2
        if kind == "array":
            s = draw(st.sampled_from([bshape, bshape[-1:], ()]))
            hi = max(size, 1) - 1 + (draw(st.integers(0, 20)) == 0)  # sometimes out of range
            idx = draw(arrays("int64", s, elements=st.integers(-size, hi)))
            dt = draw(st.sampled_from(["int64", "int32", "uint8", "int8"]))
            idx = (np.abs(idx) if dt == "uint8" else idx).astype(dt)
            items.append(idx if draw(st.booleans()) else idx.tolist() if idx.ndim else idx)
            d += 1
        elif kind in ("mask", "mask1"):
            k = 1 if kind == "mask1" else draw(st.integers(0, len(shape) - d))
            mask = draw(arrays("bool", tuple(shape[d:d + k])))
            items.append(mask)
            d += k
        elif kind == "slice":
            b = st.one_of(st.none(), st.integers(-size - 1, size + 1))
            items.append(slice(draw(b), draw(b), draw(st.sampled_from([None, 1, 2, -1, -2]))))
            d += 1
        elif kind == "int":
            items.append(draw(st.integers(-size, max(size - 1, 0))))
            d += 1
        elif kind == "none":
            items.append(None)
        elif not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
    if len(items) == 1 and draw(st.booleans()):
        return items[0]
    return tuple(items)


def _ts_key(key):
    """The same key with NumPy arrays turned into tessera tensors half of the time."""
    conv = lambda k: ts.asarray(k) if isinstance(k, np.ndarray) and k.ndim % 2 == 0 else k
    return tuple(conv(k) for k in key) if isinstance(key, tuple) else conv(key)


def _np_or_raise(fn):
    try:
        return fn(), None
    except (IndexError, ValueError) as e:
        return None, e


@given(st.data())
def test_getitem_matches_numpy(data):
    a = data.draw(arrays("int32", shapes(0, 4, 0, 4)))
    a = strided_views(data.draw, a)
    key = data.draw(adv_keys(a.shape))
    want, err = _np_or_raise(lambda: a[key])
    x = ts.asarray(a)
    if err is not None:
        with pytest.raises(type(err)):
            x[_ts_key(key)]
        return
    got = x[_ts_key(key)]
    assert_same(got, want)


@given(st.data())
def test_setitem_matches_numpy(data):
    a = data.draw(arrays("float64", shapes(0, 4, 0, 4)))
    key = data.draw(adv_keys(a.shape))
    sel, err = _np_or_raise(lambda: a[key])
    x = ts.asarray(a.copy())
    if err is not None:
        with pytest.raises(type(err)):
            x[_ts_key(key)] = 1.0
        return
    kind = data.draw(st.sampled_from(["scalar", "full", "broadcast"]))
    if kind == "scalar":
        value = data.draw(st.floats(-10, 10))
    elif kind == "full":
        value = data.draw(arrays("float32", sel.shape))
    else:
        value = data.draw(arrays("int16", sel.shape[-1:]))
    want = a.copy()
    want[key] = value
    x[_ts_key(key)] = ts.asarray(value) if isinstance(value, np.ndarray) else value
    assert_same(x, want)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype(dtype):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype) if dtype != "bfloat16" else None
    if a is None:
        x = ts.astype(ts.reshape(ts.arange(24), (2, 3, 4)), ts.bfloat16)
        assert_same(ts.astype(x[[1, 0], :, [3, -1]], ts.float32),
                    np.arange(24).reshape(2, 3, 4).astype(np.float32)[[1, 0], :, [3, -1]])
        return
    x = ts.asarray(a)
    assert_same(x[[1, 0], :, [3, -1]], a[[1, 0], :, [3, -1]])
    assert_same(x[a.astype(bool) if dtype == "bool" else a > a.flat[5]],
                a[a.astype(bool) if dtype == "bool" else a > a.flat[5]])
    b = a.copy()
    b[:, [2, 0, 2]] = a[0, 0, 0]
    x[:, [2, 0, 2]] = x[0, 0, 0]
    assert_same(x, b)


def test_adjacency_rule_and_int_as_array():
    a = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    x = ts.asarray(a)
    for key in [(slice(None), [0, 1], [1, 2]), (slice(None), [0, 1], slice(None), [1, 2]),
                (0, slice(None), [1, 2]), (Ellipsis, [0, 2], 1), ([[0], [1]], slice(None), [0, 3]),
                ([0, 1], None, [1, 2]), (slice(None), np.array([[True, False, True, False]] * 3)),
                (1, np.ones((3, 4), bool), slice(None, None, -2))]:
        assert_same(x[key], a[key])


def test_zero_d_bool_and_empty_selections():
    a = np.arange(6.0).reshape(2, 3)
    x = ts.asarray(a)
    for key in [True, False, (True, 0), (Ellipsis, False), (None, True), [], ([], []),
                np.zeros((2, 3), bool), (slice(None), np.zeros(3, bool)), ts.asarray(True)]:
        k = key
        assert_same(x[k], a[key.numpy() if isinstance(key, ts.Tensor) else key])
    s0 = np.asarray(5.0)
    s = ts.asarray(s0)
    assert_same(s[True], s0[True])
    assert_same(s[ts.asarray(False)], s0[np.False_])
    y = x.clone()
    y[np.zeros((2, 3), bool)] = 7
    assert_same(y, a)
    y[True] = 9
    assert_same(y, np.full((2, 3), 9.0))


@pytest.mark.parametrize("shape,key", [
    ((0, 1, 0), (Ellipsis, np.zeros((0, 1), bool))), ((2, 3), np.zeros((0, 3), bool)),
    ((2, 3), np.zeros((2, 0), bool)), ((3, 0), np.zeros((0, 5), bool)),
    ((1, 0), np.zeros((0, 0), bool)), ((2, 3), (slice(None), np.zeros(0, bool)))])
def test_empty_mask_axes_follow_numpy(shape, key):
    check(lambda m, x: x[key], np.zeros(shape))


def test_repeated_indices_last_write_wins():
    x = ts.zeros(4, dtype=ts.int64)
    x[[1, 1, 1, 3]] = ts.asarray([5, 6, 7, 8])
    assert x.tolist() == [0, 7, 0, 8]
    y = ts.zeros((3, 2))
    y[[0, 0], :] = ts.asarray([[1.0, 2.0], [3.0, 4.0]])
    assert y.tolist() == [[3.0, 4.0], [0.0, 0.0], [0.0, 0.0]]


def test_setitem_from_itself_and_negative_steps():
    a = np.arange(10.0)
    x = ts.asarray(a.copy())
    x[[0, 1, 2]] = x[::-1][:3]
    b = a.copy()
    b[[0, 1, 2]] = b[::-1][:3].copy()
    assert_same(x, b)
    m = np.arange(20).reshape(4, 5)
    y = ts.asarray(m)
    assert_same(y[::-1, [4, 0]], m[::-1, [4, 0]])
    assert_same(y[[3, 1], ::-2], m[[3, 1], ::-2])
    assert_same(y.T[[0, 2]], m.T[[0, 2]])


def test_read_only_destination_raises():
    ro = np.zeros(4)
    ro.setflags(write=False)
    x = ts.asarray(ro)
    for key in ([0, 1], np.ones(4, bool), (np.ones(4, bool),)):
        with pytest.raises(ValueError, match="read-only"):
            x[key] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        x.scatter_(0, ts.asarray([0]), 1.0)
    assert ro.tolist() == [0.0] * 4


def test_result_is_a_copy():
    x = ts.arange(5)
    y = x[[0, 1]]
    y[0] = 100
    assert x.tolist() == [0, 1, 2, 3, 4]


def test_index_errors():
    x = ts.zeros((2, 3))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[:, [0, 3]]
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 0 with size 2"):
        x[[-3]]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 2"):
        x[[5], :] = 1
    with pytest.raises(IndexError, match="boolean index did not match"):
        x[np.ones(3, bool)]
    with pytest.raises(IndexError, match="shape mismatch"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="integer"):
        x[ts.asarray([0.0, 1.0])]
    with pytest.raises(IndexError, match="too many indices"):
        x[[0], [0], [0]]
    with pytest.raises(ValueError, match="could not broadcast"):
        x[[0, 1]] = ts.ones((3, 2))
    with pytest.raises(IndexError):
        x[[0], ..., ...]


# ---- take / take_along_axis / nonzero / argwhere (vs NumPy)
@given(arrays("float32", shapes(1, 3, 1, 4)), st.data())
def test_take_and_take_along_axis(a, data):
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    idx = data.draw(arrays("int64", shapes(0, 2, 0, 3), elements=st.integers(-a.shape[axis], a.shape[axis] - 1)))
    check(lambda m, x, i: m.take(x, i, axis=axis), a, idx)
    flat = data.draw(arrays("int32", (3,), elements=st.integers(-a.size, a.size - 1)))
    check(lambda m, x, i: m.take(x, i), a, flat)
    order = np.argsort(a, axis=axis, kind="stable")
    check(lambda m, x, i: m.take_along_axis(x, i, axis=axis), a, order)
    shp = list(a.shape)
    shp[axis] = 2
    one = [1] * len(shp)
    one[axis] = 2
    ix = data.draw(arrays("int64", tuple(one), elements=st.integers(0, a.shape[axis] - 1)))
    check(lambda m, x, i: m.take_along_axis(x, i, axis=axis), a, ix)


@given(arrays("float64", shapes(1, 4, 0, 4), elements=st.sampled_from([0.0, -0.0, 1.0, np.nan])))
def test_nonzero_and_argwhere(a):
    check(lambda m, x: m.nonzero(x), a)
    check(lambda m, x: m.argwhere(x), a)
    assert_same(ts.asarray(a).nonzero(), torch.from_numpy(a).nonzero())
    assert_same(ts.asarray(a).nonzero(as_tuple=True), torch.from_numpy(a).nonzero(as_tuple=True))


def test_nonzero_0d_and_large():
    with pytest.raises(ValueError):
        ts.nonzero(ts.asarray(1.0))
    assert_same(ts.argwhere(ts.asarray(2)), np.argwhere(np.asarray(2)))
    assert_same(ts.asarray(0).nonzero(), torch.tensor(0).nonzero())
    rng = np.random.default_rng(0)
    m = rng.random((300, 700)) < 0.3  # several blocks, several threads
    assert_same(ts.nonzero(ts.asarray(m)), np.nonzero(m))


def test_large_gather_and_mask_match_numpy():
    rng = np.random.default_rng(1)
    a = rng.random(1 << 18).astype(np.float32)
    idx = rng.integers(-a.size, a.size, 1 << 17)
    m = a > 0.5
    x = ts.asarray(a)
    assert_same(x[idx], a[idx])
    assert_same(x[m], a[m])
    b = a.reshape(512, 512)
    assert_same(ts.asarray(b)[:, idx[:100] % 512], b[:, idx[:100] % 512])


# ---- PyTorch family (vs torch)
@st.composite
def gather_case(draw):
    shape = draw(shapes(1, 3, 1, 4))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    ishape = tuple(draw(st.integers(0, s)) if i != dim % len(shape) else draw(st.integers(0, 4))
                   for i, s in enumerate(shape))
    a = draw(arrays("float64", shape))
    idx = draw(arrays("int64", ishape, elements=st.integers(-shape[dim], shape[dim] - 1)))
    return a, dim, idx


@given(gather_case(), st.data())
def test_gather_scatter_vs_torch(case, data):
    a, dim, idx = case
    check_t = lambda fn, *arrs: assert_same(
        fn(ts, *[ts.asarray(x) for x in arrs]),
        fn(torch, *[torch.from_numpy(np.array(x)) for x in arrs]))
    pos = idx % a.shape[dim]
    check_t(lambda m, x, i: m.gather(x, dim, i), a, pos)
    # negative indices: torch's RuntimeError in both
    same_as_torch(lambda m: m.gather(m.from_numpy(a), dim, m.from_numpy(idx)).tolist(),
                  exact_error=True)
    src = data.draw(arrays("float64", tuple(s + 1 for s in idx.shape)))
    # scatter with repeated indices is order-dependent in torch; use unique positions per column
    check_t(lambda m, x, i, s: m.scatter_add(x, dim, i, s), a, pos, src)
    check_t(lambda m, x, i: m.scatter(x, dim, i, 2.5), a, pos)  # same value: order-free
    if _unique_along(pos, dim):
        check_t(lambda m, x, i, s: m.scatter(x, dim, i, s), a, pos, src)
        check_t(lambda m, x, i, s: x.clone().scatter_(dim, i, s), a, pos, src)
    check_t(lambda m, x, i, s: x.clone().scatter_add_(dim, i, s), a, pos, src)


def _unique_along(pos, dim):
    if pos.size == 0:
        return True
    s = np.sort(np.moveaxis(pos, dim, -1), axis=-1)
    return not (s[..., 1:] == s[..., :-1]).any()


@given(arrays("float32", shapes(1, 3, 1, 4)), st.data())
def test_index_select_index_add_vs_torch(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    idx = data.draw(arrays("int64", (data.draw(st.integers(0, 5)),), elements=st.integers(0, n - 1)))
    check_torch(lambda m, x, i: m.index_select(x, dim, i), a, idx)
    check_torch(lambda m, x, i: x.index_select(dim, i), a, idx)
    sshape = list(a.shape)
    sshape[dim] = idx.size
    src = data.draw(arrays("float32", tuple(sshape)))
    check_torch(lambda m, x, i, s: m.index_add(x, dim, i, s, alpha=2), a, idx, src, atol=1e-4)
    check_torch(lambda m, x, i, s: x.clone().index_add_(dim, i, s), a, idx, src, atol=1e-4)


def check_torch(fn, *arrs, **tol):
    assert_same(fn(ts, *[ts.asarray(x) for x in arrs]),
                fn(torch, *[torch.from_numpy(np.array(x)) for x in arrs]), **tol)


@given(arrays("int32", shapes(0, 3, 0, 4)), st.data())
def test_masked_vs_torch(a, data):
    mshape = data.draw(st.sampled_from([a.shape, a.shape[1:], a.shape[:0]] + ([(1,) + a.shape[1:]] if a.ndim else [])))
    mask = data.draw(arrays("bool", mshape))
    check_torch(lambda m, x, k: m.masked_fill(x, k, 7), a, mask)
    check_torch(lambda m, x, k: m.masked_fill(x, k, 2.9), a, mask)  # cast to int32 like torch
    check_torch(lambda m, x, k: x.masked_fill(k, -1), a, mask)
    check_torch(lambda m, x, k: x.clone().masked_fill_(k, 3), a, mask)
    check_torch(lambda m, x, k: m.masked_select(x, k), a, mask)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_torch_family_every_dtype(dtype):
    if dtype in ("uint16", "uint32", "uint64") or dtype == "bfloat16":
        a = ts.astype(ts.reshape(ts.arange(12), (3, 4)), getattr(ts, dtype))
        want = np.arange(12).reshape(3, 4)
        got = ts.gather(a, 1, ts.asarray([[0, 3], [1, 1], [2, 0]]))
        assert_same(ts.astype(got, ts.int64), np.take_along_axis(want, np.array([[0, 3], [1, 1], [2, 0]]), 1))
        return
    a = np.arange(12).reshape(3, 4).astype(dtype)
    i = np.array([[0, 2, 1, 0]])
    check_torch(lambda m, x, k: m.gather(x, 0, k), a, i)
    check_torch(lambda m, x, k: m.scatter_add(x, 0, k, x), a, i)
    check_torch(lambda m, x, k: m.index_select(x, 1, k[0]), a, i)


def test_torch_family_errors():
    x = ts.zeros((2, 3))
    with pytest.raises(RuntimeError, match="gather: index 3 is out of bounds for dimension 1 with size 3"):
        ts.gather(x, 1, ts.asarray([[3]]))
    with pytest.raises(ValueError, match="as many dims"):
        ts.gather(x, 1, ts.asarray([0]))
    with pytest.raises(TypeError, match="integer"):
        ts.gather(x, 0, ts.asarray([[0.0]]))
    with pytest.raises(ValueError, match="larger than input"):
        ts.gather(x, 0, ts.zeros((1, 4), dtype=ts.int64))
    with pytest.raises(IndexError):
        ts.gather(x, 2, ts.asarray([[0]]))
    with pytest.raises(ValueError, match="larger than src"):
        ts.scatter(x, 0, ts.zeros((1, 3), dtype=ts.int64), ts.ones((1, 2)))
    with pytest.raises(TypeError, match="src"):
        ts.scatter(x, 0, ts.zeros((1, 3), dtype=ts.int64))
    with pytest.raises(ValueError, match="must have shape"):
        ts.index_add(x, 0, ts.asarray([0]), ts.ones((2, 3)))
    with pytest.raises(ValueError, match="0-d or 1-d"):
        ts.index_select(x, 0, ts.zeros((1, 1), dtype=ts.int64))
    with pytest.raises(TypeError, match="bool"):
        ts.masked_fill(x, ts.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="does not broadcast"):
        ts.masked_fill(x, ts.ones((4, 3), dtype=ts.bool), 1)
    with pytest.raises(ValueError, match="0-d"):
        ts.masked_fill(x, ts.ones((2, 3), dtype=ts.bool), ts.ones(2))
    with pytest.raises(IndexError):
        ts.take(x, ts.asarray([6]))
    with pytest.raises(IndexError):
        ts.take(x, ts.asarray([0]), axis=2)
    with pytest.raises(ValueError):
        ts.take_along_axis(x, ts.asarray([0]), axis=0)


def test_capabilities():
    caps = ts.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True


@pytest.mark.parametrize("key", [
    lambda I: (range(3), I([0, 2, 1])), lambda I: range(1, 3), lambda I: range(0),
    lambda I: (slice(None), range(3, 0, -1)), lambda I: (range(2), 1), lambda I: range(-3, 0),
])
def test_range_keys_index_as_torch(key):
    """x[range(n), y] (mnist_forward_forward's one-hot overlay): a range is its list of ints."""
    a = np.arange(12.0).reshape(3, 4)
    t, x = torch.tensor(a), ts.asarray(a)
    assert_same(x[key(ts.asarray)], t[key(torch.tensor)].numpy())
    t[key(torch.tensor)] = -1.0
    x[key(ts.asarray)] = -1.0
    assert_same(x, t.numpy())
    with pytest.raises(IndexError):
        x[range(5)]
