"""In-place writes of values that require grad into tensors that do not (issue #4): the buffer
(or the base of the view written into) becomes a non-leaf whose gradient reaches the written
value, like PyTorch; `a @= b` records like `a = a @ b` written in place; in-place writes into a
leaf that requires grad (or a view of one) still raise. Gradients are compared with PyTorch on
the same programs in float32 and float64 and checked with gradcheck in float64."""
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera.testing import gradcheck, gradgradcheck
from harness import compare_leaf_grads, to_np

rng = np.random.default_rng(23)


def ones(lib: Any, dt: Any, shape: tuple) -> Any:
    """A buffer that does not require grad, with distinct values (so a write is visible)."""
    return lib.reshape(lib.arange(1, 1 + int(np.prod(shape)), dtype=dt), shape) / 4


# ---- programs: `w` (and `x`) require grad; every buffer is made inside and does not
def _setitem_whole_buffer(lib, dt, w):
    buf = lib.zeros(3, dtype=dt)
    buf[0] = w[1] * 2
    return buf * lib.arange(1, 4, dtype=dt)


def _add_into_slice(lib, dt, w):
    buf = ones(lib, dt, (4,))
    buf[1:] += w
    return buf * buf


def _mul_whole_buffer(lib, dt, w):
    buf = ones(lib, dt, (3,))
    buf.mul_(w)
    return buf * buf


def _mul_into_row(lib, dt, w):
    buf = ones(lib, dt, (2, 3))
    v = buf[1]
    v.mul_(w)
    if w.requires_grad and lib.is_grad_enabled():  # (gradcheck also runs it without)
        assert v.requires_grad and not v.is_leaf
    return lib.sin(buf)


def _transposed_view(lib, dt, w):
    buf = ones(lib, dt, (3, 2))
    buf.T[0].mul_(w)
    buf.mT[1][1:] = w[:2] ** 2
    return buf * 1.5


def _chained_views(lib, dt, w):
    buf = ones(lib, dt, (3, 4))
    buf[1:][0][::2] = w[:2]
    buf[:, 1:][2].sub_(w)
    return buf.exp()


def _other_views_see_the_write(lib, dt, w):
    buf = ones(lib, dt, (3,))
    v = buf[0:2]
    assert not v.requires_grad
    buf[2:] = w[0]
    buf[0:1].mul_(w[1])  # v's first element too
    assert v.requires_grad == (w.requires_grad and lib.is_grad_enabled())
    return v * 3 + buf.sum()


def _view_read_after_its_write(lib, dt, w):
    buf = ones(lib, dt, (2, 3))
    v = buf[1]
    v += w
    return v ** 2


def _two_writers(lib, dt, w, x):
    buf = lib.zeros((2, 3), dtype=dt)
    buf[0] = w
    buf[1] = x * 2 + buf[0]
    buf[:, 0].div_(w[0])
    return buf


def _write_then_divide_by_buffer(lib, dt, w):
    buf = ones(lib, dt, (3,))
    buf[1] = w[0] * w[1]
    return w / buf


def _leafs_unused_part(lib, dt, w):
    buf = ones(lib, dt, (4,))
    buf[:2] = w[:2]
    return buf[2:] * w[2]  # w[:2]'s gradient is zero, through the written slice


def _imatmul_into_non_leaf(lib, dt, w, x):
    a = x * 2
    if lib is ts:
        a @= w
    else:
        a = a @ w  # PyTorch rebinds `a @= w`; same values and gradients
    return a


def _imatmul_into_plain_buffer(lib, dt, w):
    a = lib.eye(3, dtype=dt) + 0.5
    if lib is ts:
        a @= w
    else:
        a = a @ w
    return a * a


def _imatmul_into_a_view(lib, dt, w):
    buf = ones(lib, dt, (2, 3, 3))
    if lib is ts:
        v = buf[1]
        v @= w
    else:
        buf[1] = buf[1].clone() @ w  # (torch's matmul would save the row it overwrites)
    return buf.sum(0)


def _imatmul_self(lib, dt, x):
    a = x * 1.0
    if lib is ts:
        a @= a
    else:
        a = a @ a
    return a


def idx(lib, values):
    return lib.tensor(values) if lib is torch else ts.asarray(values)


def _scatter_into_views(lib, dt, w):
    buf = ones(lib, dt, (2, 3))
    buf[1].scatter_(0, idx(lib, [2, 0]), w[:2])
    buf[0].scatter_add_(0, idx(lib, [1, 1]), w[1:] * 2)
    return buf * buf


def _index_add_into_a_view(lib, dt, w):
    buf = ones(lib, dt, (3, 3))
    source = lib.reshape(w[:2], (1, 2)) * lib.reshape(w[1:], (2, 1))
    buf[1:].index_add_(1, idx(lib, [2, 0]), source)
    return lib.sin(buf)


def _advanced_and_masked_writes(lib, dt, w):
    buf = ones(lib, dt, (3, 3))
    buf[1][idx(lib, [0, 2])] = w[:2] * 3
    buf[2].masked_fill_(idx(lib, [True, False, True]), 0.5)
    col = buf[:, 2]
    col[col > 1] = w[2]
    return buf.exp()


def _diagonal_view(lib, dt, w):
    buf = ones(lib, dt, (3, 3))
    diag = torch.diagonal(buf) if lib is torch else ts.linalg.diagonal(buf)
    diag.mul_(w)
    return buf * 2


def _zero_d_and_empty_views(lib, dt, w):
    buf = ones(lib, dt, (2, 3))
    buf[1][2].mul_(w[0])  # a 0-d view
    buf[0][3:] += w[3:]  # empty: nothing written, nothing recorded for w
    e = buf[:, 1:1]
    e.mul_(w[:0])
    return buf * buf


PROGRAMS = [
    (_setitem_whole_buffer, [(3,)]), (_add_into_slice, [(3,)]), (_mul_whole_buffer, [(3,)]),
    (_mul_into_row, [(3,)]), (_transposed_view, [(3,)]), (_chained_views, [(3,)]),
    (_other_views_see_the_write, [(2,)]), (_view_read_after_its_write, [(3,)]),
    (_two_writers, [(3,), (3,)]), (_write_then_divide_by_buffer, [(3,)]),
    (_leafs_unused_part, [(3,)]), (_imatmul_into_non_leaf, [(3, 3), (2, 3)]),
    (_imatmul_into_plain_buffer, [(3, 3)]), (_imatmul_into_a_view, [(3, 3)]),
    (_imatmul_self, [(3, 3)]), (_scatter_into_views, [(3,)]), (_index_add_into_a_view, [(3,)]),
    (_advanced_and_masked_writes, [(3,)]), (_diagonal_view, [(3,)]),
    (_zero_d_and_empty_views, [(3,)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn,shapes", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_writes_of_grad_values_into_plain_tensors_match_torch(fn, shapes, dtype):
    compare_leaf_grads(fn, [rng.standard_normal(s) for s in shapes], dtype, generator=rng)


@pytest.mark.parametrize("fn,shapes", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_writes_of_grad_values_into_plain_tensors_gradcheck(fn, shapes):
    leaves = [ts.asarray(rng.standard_normal(s), requires_grad=True) for s in shapes]
    assert gradcheck(lambda *xs: fn(ts, ts.float64, *xs), tuple(leaves))


def test_second_order_through_a_written_buffer():
    def f(w):
        buf = ts.zeros((2, 3), dtype=ts.float64)
        buf[0] = w * w
        buf[1, 1:].mul_(w[:2])
        return ts.sin(buf)
    assert gradgradcheck(f, (ts.asarray(rng.standard_normal(3), requires_grad=True),))


def test_buffer_becomes_a_non_leaf_with_the_write_history():
    w = ts.asarray(rng.standard_normal(3), requires_grad=True)
    buf = ts.zeros((2, 3))
    assert buf.is_leaf and not buf.requires_grad
    buf[1].mul_(w.astype(ts.float32))
    assert buf.requires_grad and not buf.is_leaf
    assert buf.grad_fn.name() == "CopySlices"
    whole = ts.zeros(3)
    whole.mul_(w)
    assert whole.grad_fn.name() == "MulBackward0"


def test_mixed_dtypes_reach_the_value_in_its_dtype():
    a = rng.standard_normal(3)
    w = ts.asarray(a, requires_grad=True)  # float64 into a float32 buffer
    wt = torch.tensor(a, requires_grad=True)
    buf, bt = ts.ones((2, 3), dtype=ts.float32), torch.ones((2, 3), dtype=torch.float32)
    buf[1] += w
    bt[1] += wt
    (buf * buf).sum().backward()
    (bt * bt).sum().backward()
    assert w.grad.dtype == ts.float64
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-6)


def test_complex_writes_into_a_plain_buffer():
    a = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    w, wt = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    b, bt = ts.ones((2, 3), dtype=ts.complex128), torch.ones((2, 3), dtype=torch.complex128)
    b[1] += w
    bt[1] += wt
    b[0, 1:].mul_(w[:2])
    bt[0, 1:].mul_(wt[:2])
    ts.sum(ts.abs(b) ** 2).backward()
    (bt.abs() ** 2).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)


def test_writes_into_strided_bases():
    # Bases whose own layout is transposed or runs backwards (a detached alias is a base of
    # its own, like PyTorch's non-differentiable views): the regions are found by position.
    a = rng.standard_normal(3)
    for make in (lambda: ts.reshape(ts.arange(12.0, dtype=ts.float64), (3, 4)).T.detach(),
                 lambda: ts.flip(ts.reshape(ts.arange(12.0, dtype=ts.float64), (4, 3)), axis=(0, 1)).detach(),
                 lambda: ts.reshape(ts.arange(24.0, dtype=ts.float64), (4, 6))[::2, 1::2].detach()):
        w = ts.asarray(a, requires_grad=True)
        base = make()
        assert not base.is_contiguous()
        plain = ts.asarray(base.numpy().copy())
        base[1:][0, :3] *= w
        base[:, 1].add_(w[0])
        ref_w = ts.asarray(a, requires_grad=True)
        plain[1, :3] = plain[1, :3].clone() * ref_w  # (mul would save the row it overwrites)
        plain[:, 1] = plain[:, 1] + ref_w[0]
        np.testing.assert_allclose(base.numpy(), plain.numpy(), rtol=1e-12)
        cot = ts.asarray(rng.standard_normal(tuple(base.shape)))
        ts.sum(ts.sin(base) * cot).backward()
        ts.sum(ts.sin(plain) * cot).backward()
        np.testing.assert_allclose(w.grad.numpy(), ref_w.grad.numpy(), rtol=1e-12)


def test_negative_step_and_flipped_views_of_a_plain_buffer():
    # PyTorch has neither negative steps nor flip views: compare with its index writes.
    a = rng.standard_normal(3)
    w, wt = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    buf, bt = ts.ones((3, 3), dtype=ts.float64), torch.ones((3, 3), dtype=torch.float64)
    buf[::-2, 1] = w[:2] * 4
    v = ts.flip(buf, axis=1)[0]
    v += w
    bt[[2, 0], 1] = wt[:2] * 4
    bt[0, [2, 1, 0]] += wt
    np.testing.assert_allclose(buf.detach().numpy(), to_np(bt), rtol=1e-12)
    cot = rng.standard_normal((3, 3))
    ts.sum(ts.exp(buf) * ts.asarray(cot)).backward()
    (torch.exp(bt) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12)


def test_detach_is_a_separate_base():
    w = ts.asarray(rng.standard_normal(3), requires_grad=True)
    buf = ts.zeros(3)
    d = buf.detach()
    d.mul_(w)
    assert d.requires_grad and not buf.requires_grad  # PyTorch: the same


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 5), st.integers(0, 2**31 - 1),
       st.sampled_from(["set", "add", "mul"]), st.booleans())
def test_hypothesis_writes_into_views_of_plain_buffers(rows, cols, seed, op, transposed):
    r = np.random.default_rng(seed)
    r0, c0 = int(r.integers(0, rows - 1)), int(r.integers(0, cols - 1))
    step = int(r.integers(1, 3))
    key = (slice(r0, None), slice(c0, None, step))
    view_shape = (rows - r0, len(range(c0, cols, step)))
    buf_np = r.standard_normal((cols, rows) if transposed else (rows, cols))

    def fn(lib, dt, w):
        buf = lib.asarray(buf_np.copy()) if lib is ts else torch.tensor(buf_np.copy())
        grid = buf.T if transposed else buf
        v = grid[key]
        if op == "set":
            v[...] = w * w
        elif op == "add":
            v += w
        else:
            v.mul_(w)
        return lib.cos(buf) * 2

    compare_leaf_grads(fn, [r.standard_normal(view_shape)], generator=rng)


# ---- what still raises
def test_inplace_into_a_leaf_that_requires_grad_raises_like_torch():
    a = rng.standard_normal((3, 3))
    programs = [
        (lambda x: x.mul_(2.0), "a leaf tensor that requires grad"),
        (lambda x: x.__setitem__(0, 1.0), "a leaf tensor that requires grad"),
        (lambda x: x[0].mul_(2.0), "view of a leaf tensor that requires grad"),
        (lambda x: x.T[1:].__iadd__(1.0), "view of a leaf tensor that requires grad"),
    ]
    for prog, msg in programs:
        with pytest.raises(RuntimeError, match=msg):
            prog(ts.asarray(a, requires_grad=True))
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            prog(torch.tensor(a, requires_grad=True))
    x = ts.asarray(a, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"matmul \(in-place\): a leaf Variable that requires"):
        x @= ts.eye(3, dtype=ts.float64)
    with ts.no_grad():
        x @= ts.eye(3, dtype=ts.float64)  # parameter-update style: allowed
    np.testing.assert_allclose(x.detach().numpy(), a)


def test_views_made_under_no_grad_still_raise_like_torch():
    a = rng.standard_normal(3)
    for lib, make in ((torch, torch.tensor), (ts, ts.asarray)):
        w = make(a, requires_grad=True)
        buf = lib.zeros(3, dtype=w.dtype)
        with lib.no_grad():
            v = buf[1:]
        with pytest.raises(RuntimeError, match="no_grad"):
            v.mul_(w[1:])
    with pytest.raises(RuntimeError, match="does not track"):
        v[0] = w[0]
    with pytest.raises(RuntimeError, match="does not track"):
        v[1:] += w[2:]  # a view of such a view can't name the base either
    assert not buf.requires_grad


def test_imatmul_errors():
    a = ts.ones((2, 3))
    with pytest.raises(ValueError, match=r"matmul: output with shape \(2, 3\) doesn't match "
                                         r"the broadcast shape \(2, 2\)"):
        a @= ts.ones((3, 2))
    with pytest.raises(ValueError):  # NumPy refuses the same in-place matmul
        an = np.ones((2, 3))
        an @= np.ones((3, 2))
    i = ts.ones((2, 2), dtype=ts.int64)
    with pytest.raises(TypeError, match=r"matmul: result type float32 can't be cast to the "
                                        r"desired output type int64"):
        i @= ts.ones((2, 2))
    with pytest.raises(TypeError):
        ni = np.ones((2, 2), dtype=np.int64)
        ni @= np.ones((2, 2))
    np.testing.assert_array_equal(i.numpy(), np.ones((2, 2)))  # untouched after the error


def test_imatmul_without_grad_is_in_place():
    a = ts.asarray(rng.standard_normal((3, 3)))
    b = ts.asarray(rng.standard_normal((3, 3)))
    alias = a
    expected = a.numpy() @ b.numpy()
    a @= b
    assert a is alias and not a.requires_grad
    np.testing.assert_allclose(alias.numpy(), expected, rtol=1e-12)
