"""The manipulation functions parsed in C++ (csrc/python/bind_views.cpp, bind_manipulation.cpp):
every argument form torch and the array API standard accept, against PyTorch; the Tensor
method and the namespace function are one object (issue 17)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import tessera as ts
from harness import same_result

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
M = np.arange(20, dtype=np.float32).reshape(4, 5)


def _pair(a=A):
    return ts.asarray(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("name", ["movedim", "moveaxis", "broadcast_to", "diagonal", "trace",
                                  "tensor_split", "hsplit", "vsplit", "dsplit", "roll",
                                  "repeat_interleave", "fliplr", "flipud", "rot90", "ravel",
                                  "unflatten", "narrow_copy", "split_with_sizes", "take_along_dim",
                                  "diag", "diag_embed", "diagflat"])
def test_method_is_the_function(name):
    assert getattr(ts.Tensor, name) is getattr(ts, name)
    assert ts.row_stack is ts.vstack
    assert not isinstance(getattr(ts, name), type(_pair))  # a C++ function, not Python


@pytest.mark.parametrize("name", ["reshape", "squeeze", "broadcast_to", "diagonal", "trace",
                                  "tensor_split", "roll", "repeat_interleave", "moveaxis",
                                  "rot90", "unflatten", "split_with_sizes", "hstack",
                                  "atleast_2d", "broadcast_shapes"])
def test_signature_shown(name):
    sig = inspect.signature(getattr(ts, name))
    assert len(sig.parameters) >= 1
    assert getattr(ts, name).__doc__


CASES = {
    # roll: torch's positional dims, shifts=/dims=, the standard's shift=/axis=
    "roll_pos": lambda m, x: m.roll(x, 1, 0),
    "roll_flat": lambda m, x: m.roll(x, 5),
    "roll_kw": lambda m, x: m.roll(x, shifts=(1, -2), dims=(0, 2)),
    "roll_method": lambda m, x: x.roll(2, 1),
    "roll_method_kw": lambda m, x: x.roll(shifts=1, dims=-1),
    # moveaxis / movedim
    "moveaxis": lambda m, x: m.moveaxis(x, 0, 2),
    "moveaxis_kw": lambda m, x: m.moveaxis(x, source=(0, 1), destination=(2, 0)),
    "movedim_method": lambda m, x: x.movedim(-1, 0),
    "moveaxis_method": lambda m, x: x.moveaxis(source=1, destination=0),
    # broadcast_to
    "broadcast_to": lambda m, x: m.broadcast_to(x[:, :1], (2, 3, 4)),
    "broadcast_to_size": lambda m, x: m.broadcast_to(x[:, :1], size=(2, 3, 4)),
    "broadcast_to_method": lambda m, x: x[:1].broadcast_to((5, 3, 4)),
    "broadcast_to_method_size": lambda m, x: x[:1].broadcast_to(size=(5, 3, 4)),
    # diagonal / trace
    "diagonal": lambda m, x: m.diagonal(x),
    "diagonal_dims": lambda m, x: m.diagonal(x, 1, 1, 2),
    "diagonal_neg": lambda m, x: m.diagonal(x, offset=-1, dim1=-1, dim2=0),
    "diagonal_method": lambda m, x: x.diagonal(0, -2, -1),
    "trace": lambda m, x: m.trace(x[0]),
    "trace_int": lambda m, x: m.trace(x[0].to(m.int32)),
    "trace_method": lambda m, x: x[1].trace(),
    # tensor_split and friends
    "tensor_split_n": lambda m, x: m.tensor_split(x, 3, 2),
    "tensor_split_idx": lambda m, x: m.tensor_split(x, [1, -1, 10], dim=2),
    "tensor_split_tuple": lambda m, x: m.tensor_split(x, (0, 2), 1),
    "tensor_split_sections": lambda m, x: m.tensor_split(x, sections=3, dim=1),
    "tensor_split_indices": lambda m, x: m.tensor_split(x, indices=[1, 2], dim=1),
    "tensor_split_tensor": lambda m, x: m.tensor_split(x, m.tensor([1, 3]), 2),
    "tensor_split_tensor0d": lambda m, x: m.tensor_split(x, m.tensor(2), 2),
    "tensor_split_method": lambda m, x: x.tensor_split(2, dim=-1),
    "tensor_split_method_kw": lambda m, x: x.tensor_split(sections=2),
    "hsplit": lambda m, x: m.hsplit(x, 3),
    "hsplit_1d": lambda m, x: m.hsplit(x.reshape(-1), [5, 7]),
    "vsplit": lambda m, x: m.vsplit(x, 2),
    "dsplit": lambda m, x: x.dsplit([1, 3]),
    # repeat_interleave
    "repeat_interleave_flat": lambda m, x: m.repeat_interleave(x, 2),
    "repeat_interleave_dim": lambda m, x: m.repeat_interleave(x, 2, dim=1),
    "repeat_interleave_counts": lambda m, x: m.repeat_interleave(x[0, :, 0] * 0 + 1, m.tensor([1, 0, 3]), 0),
    "repeat_interleave_0d": lambda m, x: m.repeat_interleave(x, m.tensor(2), -1),
    "repeat_interleave_only": lambda m, x: m.repeat_interleave(m.tensor([2, 0, 1])),
    "repeat_interleave_method": lambda m, x: x.repeat_interleave(3, dim=0, output_size=6),
    # flips, rot90, ravel, unflatten, narrow_copy, split_with_sizes
    "fliplr": lambda m, x: m.fliplr(x),
    "flipud_method": lambda m, x: x.flipud(),
    "rot90": lambda m, x: m.rot90(x),
    "rot90_k": lambda m, x: m.rot90(x, -1, (2, 0)),
    "rot90_k2": lambda m, x: x.rot90(2, [1, 2]),
    "rot90_k3": lambda m, x: m.rot90(x, k=3, dims=(0, -1)),
    "ravel": lambda m, x: m.ravel(x.transpose(0, 2)),
    "unflatten": lambda m, x: m.unflatten(x, 2, (2, -1)),
    "unflatten_method": lambda m, x: x.unflatten(-1, [1, 2, 2]),
    "narrow_copy": lambda m, x: m.narrow_copy(x, 1, 1, 2),
    "narrow_copy_method": lambda m, x: x.narrow_copy(-1, -3, 2),
    "split_with_sizes": lambda m, x: m.split_with_sizes(x, [1, 3], -1),
    "split_with_sizes_method": lambda m, x: x.split_with_sizes((2, 1), dim=1),
    # atleast_nd, the stacks, broadcast_tensors / broadcast_shapes
    "atleast_1d": lambda m, x: m.atleast_1d(x[0, 0, 0]),
    "atleast_2d_many": lambda m, x: m.atleast_2d(x[0, 0, 0], x[0, 0], x),
    "atleast_3d_seq": lambda m, x: m.atleast_3d([x[0, 0, 0], x[0, 0], x[0]]),
    "atleast_3d_2d": lambda m, x: m.atleast_3d(x[0]),
    "hstack": lambda m, x: m.hstack([x, x[:, :1].to(m.float64)]),
    "hstack_1d": lambda m, x: m.hstack((x[0, 0], x[1, 1])),
    "vstack": lambda m, x: m.vstack([x[0, 0], x[0]]),
    "row_stack": lambda m, x: m.row_stack([x[0, 0], x[1, 1]]),
    "dstack": lambda m, x: m.dstack([x[0], x[1]]),
    "column_stack": lambda m, x: m.column_stack([x[0, 0], x[0, 1], x[0, 2]]),
    "column_stack_2d": lambda m, x: m.column_stack([x[0].T, x[1, 0]]),
    "broadcast_tensors": lambda m, x: m.broadcast_tensors(x, x[0, :, :1], x[0, 0, 0]),
    "broadcast_shapes": lambda m, x: tuple(m.broadcast_shapes((2, 1, 4), (3, 1), 1, ())),
    # flip / tile: torch's positional dims and keywords
    "flip_pos": lambda m, x: m.flip(x, [0, 2]),
    "flip_kw": lambda m, x: m.flip(x, dims=(1,)),
    "tile": lambda m, x: m.tile(x, (2, 1)),
    "tile_kw": lambda m, x: m.tile(input=x, dims=(1, 2, 1, 1)),
    # take_along_dim (function and method), x.unfold
    "take_along_dim": lambda m, x: m.take_along_dim(x, m.argsort(x, dim=2), 2),
    "take_along_dim_bcast": lambda m, x: m.take_along_dim(x, m.tensor([[[0], [3], [1]]]), dim=-1),
    "take_along_dim_flat": lambda m, x: m.take_along_dim(x, m.tensor([0, 23, 5])),
    "take_along_dim_method": lambda m, x: x.take_along_dim(m.tensor([[[1, 0, 2, 1]]]), 1),
    "unfold": lambda m, x: x.unfold(2, 2, 1),
    "unfold_step": lambda m, x: x.unfold(-1, 3, 2),
    "unfold_dim0": lambda m, x: x.unfold(0, 2, 1),
    "unfold_empty": lambda m, x: x.unfold(1, 3, 5),
    "unfold_0d": lambda m, x: x[0, 0, 0].unfold(0, 1, 1),
    # diag / diag_embed / diagflat
    "diag_1d": lambda m, x: m.diag(x[0, 0]),
    "diag_1d_up": lambda m, x: m.diag(x[0, 0], 2),
    "diag_1d_down": lambda m, x: x[0, 1].diag(-1),
    "diag_2d": lambda m, x: m.diag(x[0], 1),
    "diag_2d_method": lambda m, x: x[1].diag(diagonal=-1),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "diag_embed_dims": lambda m, x: m.diag_embed(x, 1, 0, 2),
    "diag_embed_neg": lambda m, x: m.diag_embed(x, offset=-2, dim1=-1, dim2=1),
    "diag_embed_method": lambda m, x: x.diag_embed(0, 3, 0),
    "diag_embed_empty": lambda m, x: m.diag_embed(x[:, :, :0], 1),
    "diag_embed_int": lambda m, x: m.diag_embed(x.to(m.int64), -1),
    "diag_embed_bool": lambda m, x: m.diag_embed(x > 5),
    "diagflat": lambda m, x: m.diagflat(x[0]),
    "diagflat_off": lambda m, x: x[0, :2].diagflat(-3),
    # block_diag / cartesian_prod
    "block_diag": lambda m, x: m.block_diag(x[0], x[1, :2, :1].to(m.float64), x[0, 0, 0], x[1, 1]),
    "block_diag_int": lambda m, x: m.block_diag(x[0].to(m.int32), x[1, :0]),
    "block_diag_one": lambda m, x: m.block_diag(x[0]),
    "cartesian_prod": lambda m, x: m.cartesian_prod(x[0, 0], x[1, 1, :2]),
    "cartesian_prod_3": lambda m, x: m.cartesian_prod(x[0, 0, :2], x[0, 1, :3], x[1, 2, :0]),
    "cartesian_prod_one": lambda m, x: m.cartesian_prod(x[0, 0]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forms_match_torch(name):
    x, y = _pair()
    same_result(CASES[name](ts, x), CASES[name](torch, y))


ERRORS = {
    "roll_both_shift": lambda m, x: m.roll(x, 1, shifts=1),
    "diagonal_1d": lambda m, x: m.diagonal(x[0, 0]),
    "diagonal_same": lambda m, x: m.diagonal(x, 0, 1, 1),
    "diagonal_range": lambda m, x: m.diagonal(x, 0, 0, 3),
    "trace_3d": lambda m, x: m.trace(x),
    "tensor_split_zero": lambda m, x: m.tensor_split(x, 0),
    "tensor_split_0d": lambda m, x: m.tensor_split(x.sum(), 2),
    "tensor_split_float_tensor": lambda m, x: m.tensor_split(x, m.tensor([1.0])),
    "tensor_split_dim": lambda m, x: m.tensor_split(x, 2, 3),
    "hsplit_uneven": lambda m, x: m.hsplit(x, 2),
    "vsplit_1d": lambda m, x: m.vsplit(x.reshape(-1), 2),
    "dsplit_2d": lambda m, x: m.dsplit(x[0], 2),
    "repeat_interleave_negative": lambda m, x: m.repeat_interleave(x, -1),
    "repeat_interleave_dim": lambda m, x: m.repeat_interleave(x, 2, 5),
    "broadcast_to_bad": lambda m, x: m.broadcast_to(x, (3, 3, 4)),
    "moveaxis_repeated": lambda m, x: m.moveaxis(x, (0, 0), (1, 2)),
    "fliplr_1d": lambda m, x: m.fliplr(x[0, 0]),
    "flipud_0d": lambda m, x: m.flipud(x[0, 0, 0]),
    "rot90_one_dim": lambda m, x: m.rot90(x, 1, [0]),
    "rot90_same": lambda m, x: m.rot90(x, 1, [1, 1]),
    "rot90_1d": lambda m, x: m.rot90(x[0, 0]),
    "unflatten_bad": lambda m, x: m.unflatten(x, 2, (3, -1)),
    "unflatten_two_unknown": lambda m, x: m.unflatten(x, 2, (-1, -1)),
    "unflatten_empty": lambda m, x: m.unflatten(x, 2, ()),
    "narrow_copy_range": lambda m, x: m.narrow_copy(x, 1, 2, 2),
    "split_with_sizes_sum": lambda m, x: m.split_with_sizes(x, [1, 2], 2),
    "hstack_empty": lambda m, x: m.hstack([]),
    "hstack_tensor": lambda m, x: m.hstack(x),
    "vstack_mismatch": lambda m, x: m.vstack([x[0], x[0, :, :2]]),
    "column_stack_bad": lambda m, x: m.column_stack([x, x[0]]),
    "atleast_1d_str": lambda m, x: m.atleast_1d("a"),
    "broadcast_shapes_bad": lambda m, x: m.broadcast_shapes((2, 3), (4,)),
    "broadcast_shapes_neg": lambda m, x: m.broadcast_shapes((2, -1)),
    "broadcast_tensors_bad": lambda m, x: m.broadcast_tensors(x, x[0, :2]),
    "take_along_dim_ndim": lambda m, x: m.take_along_dim(x, m.tensor([0]), 1),
    "take_along_dim_bcast_bad": lambda m, x: m.take_along_dim(x, m.zeros((3, 3, 1), dtype=m.int64), 2),
    "unfold_size": lambda m, x: x.unfold(1, 4, 1),
    "unfold_step": lambda m, x: x.unfold(1, 2, 0),
    "diag_3d": lambda m, x: m.diag(x),
    "diag_embed_same": lambda m, x: m.diag_embed(x, 0, 1, 1),
    "diag_embed_range": lambda m, x: m.diag_embed(x, 0, 0, 4),
    "block_diag_3d": lambda m, x: m.block_diag(x),
    "cartesian_prod_2d": lambda m, x: m.cartesian_prod(x[0], x[0, 0]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    x, y = _pair()
    with pytest.raises(Exception) as want:
        ERRORS[name](torch, y)
    with pytest.raises(Exception) as got:
        ERRORS[name](ts, x)
    assert isinstance(got.value, type(want.value)) or (
        # torch raises RuntimeError where tessera's class is a ValueError/IndexError subclass
        # of it, or the standard's class
        isinstance(got.value, (TypeError, ValueError, IndexError, RuntimeError))), (want.value, got.value)


def test_keyword_conflicts_raise():
    x, _ = _pair()
    with pytest.raises(TypeError):
        ts.roll(x, 1, 0, axis=0)
    with pytest.raises(TypeError):
        ts.roll(x, shift=1, shifts=1)
    with pytest.raises(TypeError):
        ts.roll(x)
    with pytest.raises(TypeError):
        ts.broadcast_to(x, (2, 3, 4), size=(2, 3, 4))
    with pytest.raises(TypeError):
        ts.tensor_split(x, 2, sections=2)
    with pytest.raises(TypeError):
        ts.tensor_split(x)
    with pytest.raises(TypeError):
        ts.squeeze(x[:1], 0, dim=0)  # was: dim= silently won over axis
    with pytest.raises(TypeError):
        x.reshape((4, 6), shape=(6, 4))


@pytest.mark.parametrize("call", [
    lambda m, t: t[:, 1:].view(-1),
    lambda m, t: t.mT.view(20),
    lambda m, t: t[:, ::2].view(12),
    lambda m, t: t[:, 1:].view_as(m.zeros(16)),
])
def test_view_that_needs_a_copy_raises_torchs_error(call):
    # torch: RuntimeError "view size is not compatible with input tensor's size and stride ...
    # Use .reshape(...) instead." (was tessera's "reshape: copy=False" ValueError)
    with pytest.raises(RuntimeError) as want:
        call(torch, torch.from_numpy(M.copy()))
    with pytest.raises(RuntimeError) as got:
        call(ts, ts.asarray(M))
    assert type(got.value) is RuntimeError, got.value
    assert "view size is not compatible with input tensor's size and stride" in str(want.value)
    assert "view size is not compatible with input tensor's size and stride" in str(got.value)
    assert "with strides" in str(got.value) and "cannot be viewed as" in str(got.value)
    assert ".reshape(...)" in str(got.value)


def test_view_where_the_strides_allow_shares_storage():
    x = ts.asarray(M)
    for call in (lambda m, t: t[1:].view(-1), lambda m, t: t.mT.view(5, 2, 2),
                 lambda m, t: t[:, :2].view(4, 2, 1), lambda m, t: t[::2].view(2, 5)):
        got, want = call(ts, x), call(torch, torch.from_numpy(M.copy()))
        same_result(got, want)
        assert got.stride() == want.stride()


def test_standard_forms():
    x = ts.asarray(A)
    assert ts.reshape(x, (6, 4)).shape == (6, 4)
    assert ts.reshape(x, shape=(-1,)).shape == (24,)
    assert ts.reshape(x, (4, 6), copy=np.bool_(True)).shape == (4, 6)
    with pytest.raises(ValueError):
        ts.reshape(x.mT, (24,), copy=False)
    with pytest.raises(TypeError):
        ts.reshape(x, (24,), copy=1)
    assert ts.squeeze(x[:, :1], axis=1).shape == (2, 4)
    assert ts.squeeze(x[:, :1], dim=-2).shape == (2, 4)
    # PyTorch's calls (no axis; dim=) are the method's: a named dim that is not size 1 stays
    y = ts.asarray(A[:, :1, None])
    for call in (lambda m, t: m.squeeze(t), lambda m, t: m.squeeze(t, dim=0),
                 lambda m, t: m.squeeze(t, dim=(0, 1))):
        same_result(call(ts, y), call(torch, torch.from_numpy(A[:, :1, None])))
    with pytest.raises(ValueError):
        ts.squeeze(x, 0)  # the standard: a named axis must have size 1
    same_result(ts.roll(x, shift=(1, 1), axis=(0, 1)),
                torch.roll(torch.from_numpy(A), (1, 1), (0, 1)))


def test_gradients_flow():
    a = np.random.default_rng(0).standard_normal((3, 4))
    x = ts.asarray(a, requires_grad=True)
    y = torch.tensor(a, requires_grad=True)
    for m, t in ((ts, x), (torch, y)):
        out = (m.roll(t, 1, 0) * 2).sum() + m.trace(t[:, :3] ** 2) + m.diagonal(t, 1).sum() \
            + sum((p * (i + 1)).sum() for i, p in enumerate(m.tensor_split(t, 3, 1))) \
            + (m.repeat_interleave(t, 2, 0) ** 2).sum() + m.moveaxis(t, 0, 1)[0].sum() \
            + (t.unfold(1, 2, 1) ** 2).sum() + (m.rot90(t, 1) * m.rot90(t, 3)).sum() \
            + m.take_along_dim(t, m.tensor([[0], [2], [1]]), 1).sum() * 3 \
            + (m.diag_embed(t, 1, 0, 2) * m.arange(75.0).reshape(5, 3, 5)).sum() \
            + (m.diag(t[0], -1) ** 2).sum() + m.diag(t).sum() * 4 + m.narrow_copy(t, 1, 1, 2).sum() \
            + (m.block_diag(t, t[0], t[1, 1]) * m.arange(45.0).reshape(5, 9)).sum() \
            + (m.cartesian_prod(t[0], t[1]) ** 2).sum()
        out.backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-10)


def test_atleast_keeps_the_object():
    x = ts.asarray(A)
    assert ts.atleast_3d(x) is x
    assert ts.atleast_1d() == ()


def test_standard_manipulation_forms():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = ts.asarray(a)
    np.testing.assert_array_equal(ts.flip(x, axis=1).numpy(), np.flip(a, 1))
    np.testing.assert_array_equal(ts.flip(x).numpy(), np.flip(a))
    np.testing.assert_array_equal(ts.tile(x, repetitions=(2,)).numpy(), np.tile(a, (2,)))
    np.testing.assert_array_equal(ts.permute_dims(x, (1, 0)).numpy(), a.T)
    assert ts.expand_dims(x).shape == (1, 2, 3)
    assert ts.expand_dims(x, axis=(0, -1)).shape == (1, 2, 3, 1)
    assert ts.expand_dims(x, dim=1).shape == (2, 1, 3)
    with pytest.raises(IndexError):
        ts.expand_dims(x, (0, 4))
    with pytest.raises(ValueError):
        ts.expand_dims(x, (0, -4))
    assert [u.shape for u in ts.unstack(x, axis=1)] == [(2,)] * 3
    assert len(ts.unstack(x, dim=0)) == 2
    np.testing.assert_array_equal(ts.repeat(x, 2, axis=1).numpy(), np.repeat(a, 2, 1))
    np.testing.assert_array_equal(ts.repeat(x, ts.asarray([1, 0, 2]), dim=1).numpy(),
                                  np.repeat(a, [1, 0, 2], 1))
    np.testing.assert_array_equal(ts.repeat(x, 2).numpy(), np.repeat(a, 2))
    out = ts.broadcast_arrays(x, ts.asarray(1.0))
    assert isinstance(out, list) and [o.shape for o in out] == [(2, 3), (2, 3)]
    for call in (lambda: ts.flip(x, 0, axis=0), lambda: ts.tile(x, (1,), repetitions=(1,)),
                 lambda: ts.expand_dims(x, 0, dim=0), lambda: ts.unstack(x, axis=1, dim=0),
                 lambda: ts.repeat(x, 2, axis=0, dim=0), lambda: ts.tile(x)):
        with pytest.raises(TypeError):
            call()


def test_as_strided_forward_and_gradient_as_torch():
    """as_strided is C++ with a C++ gradient (was: a Python autograd.Function)."""
    assert ts.Tensor.as_strided is ts.as_strided
    a = np.random.default_rng(1).standard_normal(12)
    for size, stride, off in (((3, 4), (4, 1), None), ((5, 3), (2, 1), 1), ((2, 2), (1, 2), 3),
                              ((4,), (0,), 2), ((3, 3), (3, 1), 0)):
        x = ts.asarray(a, requires_grad=True)
        y = torch.tensor(a, requires_grad=True)
        got, want = ts.as_strided(x, size, stride, off), torch.as_strided(y, size, stride, off)
        same_result(got, want)
        w = np.arange(1, got.numel() + 1, dtype=np.float64).reshape(size)
        (got * ts.asarray(w)).sum().backward()
        (want * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy())
    x = ts.asarray(a.reshape(3, 4))
    same_result(x.as_strided((2, 2), (1, 2)), torch.from_numpy(a.reshape(3, 4)).as_strided((2, 2), (1, 2)))
    with pytest.raises(RuntimeError):
        ts.as_strided(x, (2, 2), (1,))
    with pytest.raises(RuntimeError):
        ts.as_strided(x, (20,), (1,))  # beyond the storage


@pytest.mark.parametrize("view", [
    lambda t: t, lambda t: t.mT, lambda t: t[1:, ::2], lambda t: t[:1].expand(3, 5),
    lambda t: t[:, :1].expand(4, 3), lambda t: t.mT[::2], lambda t: t[2:, 3:]])
@pytest.mark.parametrize("size, stride, off", [
    ((3, 3), (1, 2), None), ((2, 2), (5, 1), 3), ((4,), (3,), 0), ((2, 3), (1, 1), None),
    ((6,), (0,), 7), ((0, 2), (1, 1), None)])
def test_as_strided_gradient_of_any_input_layout_as_torch(view, size, stride, off):
    """The gradient works in storage coordinates as torch's (Note [as_strided's gradient]):
    transposed, sliced and expanded (memory-sharing) inputs, output elements read twice, and
    storage the input does not cover."""
    a = np.random.default_rng(2).standard_normal((4, 5))
    x, y = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    got, want = ts.as_strided(view(x), size, stride, off), torch.as_strided(view(y), size, stride, off)
    same_result(got, want)
    w = np.random.default_rng(3).standard_normal(size)
    (got * ts.asarray(w)).sum().backward()
    (want * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_as_strided_double_backward_as_torch():
    a = np.random.default_rng(4).standard_normal((3, 4))
    x, y = ts.asarray(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    gx, = ts.autograd.grad((ts.as_strided(x.mT, (3, 3), (1, 1)) ** 3).sum(), x, create_graph=True)
    gy, = torch.autograd.grad((torch.as_strided(y.mT, (3, 3), (1, 1)) ** 3).sum(), y,
                              create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), gy.detach().numpy(), rtol=1e-12)
    (gx * gx).sum().backward()
    (gy * gy).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12)


def test_diag_embed_keeps_infinities_off_the_diagonal():
    x = ts.asarray([1.0, np.inf, np.nan])
    got = ts.diag_embed(x).numpy()
    assert np.isinf(got[1, 1]) and np.isnan(got[2, 2])
    assert (got[~np.eye(3, dtype=bool)] == 0).all()


def test_block_diag_of_nothing_and_identity():
    assert ts.block_diag().shape == (1, 0) and ts.block_diag().dtype == ts.float32
    x = ts.asarray(A[0, 0])
    assert ts.cartesian_prod(x) is x
