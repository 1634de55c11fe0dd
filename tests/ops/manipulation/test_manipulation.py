"""Manipulation functions of the array API and the torch-style Tensor methods (vs NumPy/torch)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import ALL_DTYPES, arrays, assert_same, check, check_torch, shapes, strided_views

dtypes = st.sampled_from(ALL_DTYPES)


@st.composite
def array_and_axis(draw, min_dims=0, max_dims=4, extra=0):
    a = draw(arrays(draw(dtypes), shapes(min_dims=min_dims, max_dims=max_dims)))
    a = strided_views(draw, a)
    n = a.ndim + extra
    axis = draw(st.integers(-n - 1, n)) if n > 0 else draw(st.integers(-1, 0))
    return a, axis


@st.composite
def joinable(draw, same_shape: bool):
    """2-4 arrays that agree except along `axis` (or entirely), of possibly different dtypes."""
    base = list(draw(shapes(min_dims=0 if same_shape else 1, max_dims=3)))
    nd = len(base)
    axis = draw(st.integers(-nd - 1, nd)) if nd else 0
    out = []
    for _ in range(draw(st.integers(1, 4))):
        s = list(base)
        if not same_shape and 0 <= axis % nd < nd:
            s[axis % nd] = draw(st.integers(0, 3))
        a = draw(arrays(draw(dtypes), tuple(s)))
        out.append(strided_views(draw, a))
    return out, axis


def _joined(arrs, ts_fn, np_fn):
    """Compares a join against NumPy's on inputs pre-cast to tessera's promoted dtype (mixed
    kinds promote as the standard/PyTorch do, e.g. int16 + float16 -> float16, not float32)."""
    dt = ts.result_type(*[ts.asarray(a) for a in arrs])
    np_dt = ts.asarray(np.zeros(0, np.float32)).astype(dt).numpy().dtype
    try:
        want = np_fn([a.astype(np_dt) for a in arrs])
    except (ValueError, IndexError, np.exceptions.AxisError):
        with pytest.raises((ValueError, IndexError)):
            ts_fn([ts.asarray(a) for a in arrs])
        return
    assert_same(ts_fn([ts.asarray(a) for a in arrs]), want)


@given(joinable(same_shape=False))
def test_concat(case):
    arrs, axis = case
    _joined(arrs, lambda xs: ts.concat(xs, axis=axis), lambda xs: np.concatenate(xs, axis=axis))


@given(joinable(same_shape=False))
def test_concat_axis_none(case):
    arrs, _ = case
    _joined(arrs, lambda xs: ts.concat(tuple(xs), axis=None), lambda xs: np.concatenate(xs, axis=None))


@given(joinable(same_shape=True))
def test_stack(case):
    arrs, axis = case
    _joined(arrs, lambda xs: ts.stack(xs, axis=axis), lambda xs: np.stack(xs, axis=axis))


def test_concat_follows_input_layout():
    a = np.arange(12.0).reshape(3, 4)
    got = ts.concat([ts.asarray(a).mT, ts.asarray(a + 1).mT], axis=0)
    want = np.concatenate([a.T, (a + 1).T], axis=0)
    assert_same(got, want)
    assert got.numpy().flags.f_contiguous == want.flags.f_contiguous  # NumPy keeps the layout too
    mixed = ts.concat([ts.asarray(a).mT, ts.asarray(np.ascontiguousarray(a.T))], axis=1)
    assert mixed.is_contiguous()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_join_of_large_inputs_split_across_threads(axis):
    """The byte-block join of contiguous inputs splits the output at arbitrary bytes across
    threads: pieces start mid-block, and empty inputs sit between full ones."""
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((300, n)).astype(np.float32) for n in (700, 0, 333, 1)]
    old = ts.get_num_threads()
    ts.set_num_threads(2)
    try:
        assert_same(ts.concat([ts.asarray(a) for a in arrs], axis=axis if axis else 1),
                    np.concatenate(arrs, axis=axis if axis else 1))
        same = [a[:, :300] for a in (arrs[0], arrs[2], arrs[0])]
        assert_same(ts.stack([ts.asarray(a) for a in same], axis=axis),
                    np.stack(same, axis=axis))
    finally:
        ts.set_num_threads(old)


def test_stack_records_one_node_like_torch():
    import torch
    a = np.arange(6.0).reshape(2, 3)
    x, xt = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y = ts.stack([x, x * 2, ts.asarray(a)], -1)
    yt = torch.stack([xt, xt * 2, torch.tensor(a)], -1)
    assert y.grad_fn.name() == yt.grad_fn.name() == "StackBackward0"
    w = np.arange(18.0).reshape(2, 3, 3)
    (g,) = ts.autograd.grad((y * y * ts.asarray(w)).sum(), [x], create_graph=True)
    (gt,) = torch.autograd.grad((yt * yt * torch.tensor(w)).sum(), [xt], create_graph=True)
    assert_same(g, gt.detach().numpy())
    assert_same(ts.autograd.grad(g.sum(), [x])[0],
                torch.autograd.grad(gt.sum(), [xt])[0].numpy())


def test_concat_stack_errors_and_aliases():
    a, b = ts.zeros((2, 3)), ts.zeros((2, 4))
    with pytest.raises(ValueError, match=r"concat: tensor 1 has shape \(2, 4\)"):
        ts.concat([a, b])
    assert ts.cat([a, b], dim=1).shape == (2, 7)
    with pytest.raises(ValueError, match="zero-dimensional"):
        ts.concat([ts.asarray(1.0), ts.asarray(2.0)])
    assert_same(ts.concat([ts.asarray(1.0), ts.asarray(2)], axis=None), np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match="at least one"):
        ts.concat([])
    with pytest.raises(ValueError, match="same shape"):
        ts.stack([a, b])
    with pytest.raises(IndexError):
        ts.stack([a, a], axis=3)
    with pytest.raises(TypeError):
        ts.concat(a)
    assert ts.stack([a, a], dim=-1).shape == (2, 3, 2)


@given(array_and_axis(min_dims=1))
def test_unstack_views(case):
    a, axis = case
    check(lambda m, x: tuple(m.unstack(x, axis=axis)) if m is ts else
          tuple(np.moveaxis(x, axis, 0)) if -x.ndim <= axis < x.ndim else np.moveaxis(x, axis, 0), a)
    if -a.ndim <= axis < a.ndim:
        x = ts.asarray(a)
        for part in ts.unstack(x, axis=axis):
            assert part._storage_ptr() == x._storage_ptr()


def test_unstack_0d_raises():
    with pytest.raises(ValueError):
        ts.unstack(ts.asarray(1.0))


@given(st.lists(shapes(max_dims=3, max_side=3), min_size=1, max_size=3), dtypes)
def test_broadcast_arrays(shs, dt):
    arrs = [np.zeros(s, dt) for s in shs]
    check(lambda m, *xs: tuple(m.broadcast_arrays(*xs)), *arrs)


@st.composite
def roll_cases(draw):
    a, _ = draw(array_and_axis())
    k = draw(st.integers(1, max(a.ndim, 1)))
    shift = tuple(draw(st.integers(-7, 7)) for _ in range(k))
    if a.ndim == 0 or draw(st.booleans()):
        return a, shift[0] if draw(st.booleans()) else shift, None
    axes = tuple(draw(st.integers(-a.ndim, a.ndim - 1)) for _ in range(k))
    form = draw(st.sampled_from(["tuples", "ints", "one_axis", "one_shift"]))
    if form == "ints" or (form == "one_axis" and k == 1):
        return a, shift[0], axes[0]
    if form == "one_axis":
        return a, shift, axes[0]
    if form == "one_shift":
        return a, shift[0], axes
    return a, shift, axes


@given(roll_cases())
def test_roll(case):
    a, shift, axis = case
    check(lambda m, x: m.roll(x, shift, axis=axis), a)


def test_roll_errors():
    with pytest.raises(ValueError):
        ts.roll(ts.zeros((2, 3)), (1, 2), axis=(0, 1, 1))
    with pytest.raises(IndexError):
        ts.roll(ts.zeros((2, 3)), 1, axis=2)
    assert_same(ts.roll(ts.arange(6).reshape(2, 3), 1, dims=1), np.roll(np.arange(6).reshape(2, 3), 1, 1))


@given(array_and_axis(), st.integers(0, 3), st.booleans())
def test_repeat_int(case, reps, flat):
    a, axis = case
    ax = None if flat or a.ndim == 0 else axis
    check(lambda m, x: m.repeat(x, reps, axis=ax), a)


@given(array_and_axis(min_dims=1), st.data())
def test_repeat_tensor(case, data):
    a, axis = case
    if not -a.ndim <= axis < a.ndim:
        axis = 0
    n = a.shape[axis]
    reps = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int32)
    check(lambda m, x, r: m.repeat(x, r, axis=axis), a, reps)


def test_repeat_errors():
    x = ts.zeros((2, 3))
    with pytest.raises(ValueError):
        ts.repeat(x, -1)
    with pytest.raises(ValueError):
        ts.repeat(x, ts.asarray([1, 2]), axis=1)
    with pytest.raises(ValueError):
        ts.repeat(x, ts.asarray([1, -2]), axis=0)
    with pytest.raises(TypeError):
        ts.repeat(x, ts.asarray([1.0, 2.0]), axis=0)
    with pytest.raises(TypeError):
        ts.repeat(x, 1.5)
    assert ts.repeat(x, ts.asarray([3]), axis=0).shape == (6, 3)
    a = np.arange(6).reshape(2, 3)
    assert_same(ts.repeat(ts.asarray(a), [1, 0, 2], axis=1), np.repeat(a, [1, 0, 2], axis=1))
    assert_same(ts.repeat(ts.asarray(a), np.array([2, 1]), axis=0), np.repeat(a, [2, 1], axis=0))
    assert_same(ts.repeat(ts.asarray(a), np.int8(2)), np.repeat(a, 2))
    with pytest.raises(TypeError):
        ts.repeat(x, True)


@pytest.mark.parametrize("call", [lambda x: ts.concat([x], axis=1.5), lambda x: ts.stack([x], axis="a"),
                                  lambda x: ts.repeat(x, 2, axis=1.5), lambda x: ts.unstack(x, axis=None),
                                  lambda x: ts.roll(x, 1.5), lambda x: ts.tile(x, 2.0),
                                  lambda x: ts.tril(x, k=0.5), lambda x: ts.eye(2.5),
                                  lambda x: ts.linspace(0, 1, True)])
def test_non_integer_arguments_raise_type_error(call):
    with pytest.raises(TypeError, match="must be an int|expected an int"):
        call(ts.zeros((2, 2)))


def test_dim_aliases():
    a = np.arange(6).reshape(2, 3, 1)
    x = ts.asarray(a)
    assert_same(ts.flip(x, dims=(0, 1)), np.flip(a, axis=(0, 1)))
    assert_same(ts.expand_dims(x, dim=-1), np.expand_dims(a, -1))
    assert_same(ts.squeeze(x, dim=2), np.squeeze(a, 2))
    assert_same(ts.squeeze(x), np.squeeze(a))  # torch.squeeze(x): every size-1 dim
    with pytest.raises(ValueError, match="size-1"):
        ts.squeeze(x, axis=0)


@given(array_and_axis(max_dims=3), st.lists(st.integers(0, 3), max_size=4))
def test_tile(case, reps):
    a, _ = case
    check(lambda m, x: m.tile(x, tuple(reps)), a)


def test_tile_errors():
    with pytest.raises(ValueError):
        ts.tile(ts.zeros(2), (-1,))


# ---- existing view functions: differential checks, including negative axes and strides
@given(array_and_axis(extra=1))
def test_expand_dims(case):
    a, axis = case
    check(lambda m, x: m.expand_dims(x, axis=axis), a)


@given(arrays("uint8", shapes(max_dims=3)), st.lists(st.integers(-6, 5), min_size=1, max_size=3))
def test_expand_dims_tuple(a, axes):
    check(lambda m, x: m.expand_dims(x, axis=tuple(axes)), a)


@given(array_and_axis())
def test_flip_and_moveaxis(case):
    a, axis = case
    check(lambda m, x: m.flip(x, axis=axis), a)
    check(lambda m, x: m.flip(x), a)
    if a.ndim:
        check(lambda m, x: m.moveaxis(x, axis, 0), a)


@given(array_and_axis(min_dims=1), st.data())
def test_permute_reshape_squeeze(case, data):
    a, _ = case
    perm = data.draw(st.permutations(range(a.ndim)))
    check(lambda m, x: m.permute_dims(x, tuple(perm)), a)
    check(lambda m, x: m.reshape(x, (-1,)), a)
    ones = tuple(i for i, n in enumerate(a.shape) if n == 1)
    check(lambda m, x: m.squeeze(x, axis=ones), a)


def test_views_share_memory():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = ts.asarray(a)
    for v in [ts.flip(x, axis=1), ts.moveaxis(x, 0, -1), ts.expand_dims(x, axis=1),
              ts.broadcast_to(x, (5, 2, 3, 4)), ts.permute_dims(x, (2, 0, 1)), x.flatten(),
              x.unsqueeze(0), x[:, :1].squeeze(), x[:, :1].expand(-1, 5, -1), x.movedim(0, 2),
              x.swapaxes(0, 2), ts.broadcast_arrays(x, ts.zeros((3, 1)))[0]]:
        assert np.shares_memory(v.numpy(), a)


# ---- torch-style methods
@given(st.data())
def test_flatten_vs_torch(data):
    a = data.draw(arrays("float32", shapes(max_dims=4)))
    nd = max(a.ndim, 1)
    s = data.draw(st.integers(-nd, nd - 1))
    e = data.draw(st.integers(-nd, nd - 1))
    if (s % nd) > (e % nd):
        with pytest.raises(ValueError):
            ts.asarray(a).flatten(s, e)
        return
    check_torch(lambda m, x: x.flatten(s, e), a)


@given(st.data())
def test_squeeze_unsqueeze_flip_vs_torch(data):
    a = data.draw(arrays("int16", shapes(max_dims=4, max_side=2)))
    nd = max(a.ndim, 1)
    d = data.draw(st.integers(-nd, nd - 1))
    check_torch(lambda m, x: x.squeeze(), a)
    check_torch(lambda m, x: x.squeeze(d), a)
    check_torch(lambda m, x: x.unsqueeze(d), a)
    if a.ndim:
        check_torch(lambda m, x: x.flip(d), a)
        check_torch(lambda m, x: x.flip(list(range(a.ndim))), a)
        check_torch(lambda m, x: x.movedim(d, 0), a)
        check_torch(lambda m, x: x.swapaxes(d, 0), a)


def test_expand_vs_torch():
    a = np.arange(3, dtype=np.float32).reshape(3, 1)
    check_torch(lambda m, x: x.expand(2, -1, 4), a)
    check_torch(lambda m, x: x.expand((3, 5)), a)
    with pytest.raises(ValueError):
        ts.asarray(a).expand(4)
    with pytest.raises(ValueError):
        ts.asarray(a).expand(-1, 3, 1)
    with pytest.raises(ValueError):
        ts.asarray(a).expand(2, 1)
    with pytest.raises(IndexError):
        ts.asarray(a).squeeze(2)
    with pytest.raises(IndexError):
        ts.asarray(a).flatten(3)


def test_bfloat16_paths():
    import ml_dtypes as ml
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = ts.asarray(a).astype(ts.bfloat16)
    assert ts.concat([x, x], axis=1).dtype == ts.bfloat16
    assert ts.concat([x, ts.asarray(a)]).dtype == ts.float32
    assert_same(ts.stack([x, x], axis=1).astype(ts.float32), np.stack([a, a], axis=1))
    assert_same(ts.roll(x, 1, axis=0).astype(ts.float32), np.roll(a, 1, axis=0))
    assert_same(ts.tile(x, (2,)).astype(ts.float32), np.tile(a, (2,)))
    assert_same(ts.tril(x).astype(ts.float32), np.tril(a))
    assert_same(x[1:, ::-2].astype(ts.float32), a[1:, ::-2])
    x[0] = 1.5
    a[0] = 1.5
    assert_same(x.astype(ts.float32), a)
    assert x.numpy().dtype == ml.bfloat16
    assert_same(ts.arange(4, dtype=ts.bfloat16).astype(ts.float32), np.arange(4, dtype=np.float32))
    assert_same(ts.eye(2, dtype=ts.bfloat16).astype(ts.float32), np.eye(2, dtype=np.float32))
    assert_same(ts.linspace(0, 1, 3, dtype=ts.bfloat16).astype(ts.float32), np.linspace(0, 1, 3, dtype=np.float32))
