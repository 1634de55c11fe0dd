"""Manipulation functions of the array API (views where possible), and PyTorch's shape
functions and methods (t, split/chunk/unbind, narrow/select, diag/diagonal/trace, the stacks,
cat, flatten/unsqueeze/transpose/movedim, ...): the namespace's names for the C++ functions,
and the few still written here (diag/diag_embed/diagflat, cartesian_prod, block_diag)."""
from __future__ import annotations

import builtins
from typing import Any

from . import _C
from ._C import Tensor
# Every other function of the family is parsed in C++ with all its argument forms (the
# standard's and PyTorch's names); those that are Tensor methods too are the same objects
# (Tensor.roll is ts.roll): csrc/python/bind_views.cpp, csrc/python/bind_manipulation.cpp.
from ._C import (as_strided, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays,  # noqa: F401
                 broadcast_shapes, broadcast_tensors, broadcast_to, cat, chunk, column_stack,
                 concat, concatenate, diagonal, dsplit, dstack, expand_dims, flatten, flip, fliplr,
                 flipud, hsplit, hstack, movedim, moveaxis, narrow, narrow_copy, permute,
                 permute_dims, ravel, repeat, repeat_interleave, reshape, roll, rot90, row_stack,
                 select, split, split_with_sizes, squeeze, stack, swapaxes, swapdims, t,
                 take_along_dim, tensor_split, tile, trace, transpose, unbind, unflatten,
                 unsqueeze, unstack, vsplit, vstack)
from ._tensor import _dim_index

__all__ = ["reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip",
           "moveaxis", "broadcast_arrays", "concat", "stack", "unstack", "roll", "repeat",
           "tile"]


# ---- PyTorch's shape functions and methods
# PyTorch-style shape functions and methods: t, view_as/reshape_as/expand_as, split, chunk,
# tensor_split, unbind, repeat (torch's = tile), repeat_interleave, narrow, select, unfold,
# fliplr/flipud, rot90, diag, diagonal, diag_embed, trace, unflatten, atleast_nd, h/v/d/column
# stacks, broadcast_tensors/shapes, cartesian_prod, block_diag, take_along_dim. Pieces are views
# (basic slicing) wherever torch returns views.
_TORCH_NAMES = ["split", "chunk", "tensor_split", "unbind", "repeat_interleave", "narrow",
                "select", "fliplr", "flipud", "rot90", "diag", "diagonal", "diag_embed", "diagflat",
                "trace", "unflatten", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
                "dstack", "column_stack", "row_stack", "broadcast_tensors", "broadcast_shapes",
                "cartesian_prod", "block_diag", "take_along_dim", "flatten", "unsqueeze", "permute", "transpose",
                "swapdims", "swapaxes", "movedim", "t", "ravel", "hsplit", "vsplit", "dsplit",
                "concatenate", "cat", "as_strided", "narrow_copy", "split_with_sizes"]  # PyTorch's
__all__ += _TORCH_NAMES


def _ts() -> Any:
    import tessera
    return tessera


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose `offset` diagonal (in dims dim1, dim2 of the result) holds the last dim
    of input; zeros elsewhere."""
    n = input.shape[-1] if input.ndim else 1
    m = n + builtins.abs(offset)
    nd = input.ndim + 1
    a, b = _dim_index("diag_embed", dim1, nd), _dim_index("diag_embed", dim2, nd)
    if a == b:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input if input.ndim else _C._reshape(input, (1,), -1)
    lead = tuple(x.shape[:-1])
    out = _ts().zeros(lead + (m, m), dtype=x.dtype, device=x.device)
    idx = _ts().arange(n, device=x.device)
    rows, cols = idx + builtins.max(-offset, 0), idx + builtins.max(offset, 0)
    if n:
        out[..., rows, cols] = x
    # out's last two dims are (dim1, dim2); move them into place.
    order = [i for i in range(nd) if i not in (a, b)]
    perm = [0] * nd
    for src, dst in enumerate(order + [a, b]):
        perm[dst] = src
    return _C._permute_dims(out, tuple(perm))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D input: the square matrix with input on diagonal `diagonal`; 2-D input: a copy of
    that diagonal as a 1-D tensor."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return _C._diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag: expected a 1-D or 2-D tensor, got {input.ndim}-D")


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on diagonal `offset` of a square matrix."""
    return diag_embed(_C._reshape(input, (-1,), -1), offset)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of the 1-D inputs' elements, as rows (one input: itself)."""
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"cartesian_prod: expect a 1D vector, but got shape {tuple(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _ts().meshgrid(*tensors, indexing="ij")
    return _ts().stack([_C._reshape(g, (-1,), -1) for g in grids], axis=1)


def block_diag(*tensors: Tensor) -> Tensor:
    """The block-diagonal matrix of the inputs (0-D -> 1x1, 1-D (n,) -> 1 x n)."""
    mats = []
    for x in tensors:
        if x.ndim > 2:
            raise RuntimeError(f"block_diag: input tensors must have 2 or fewer dimensions, got {x.ndim}")
        mats.append(_C._reshape(x, (1, 1) if x.ndim == 0 else (1, x.shape[0]), -1) if x.ndim < 2 else x)
    if not mats:
        return _ts().zeros((1, 0))
    dt = mats[0].dtype
    for m in mats[1:]:
        dt = _C._promote_types(dt, m.dtype)
    rows = builtins.sum(m.shape[0] for m in mats)
    cols = builtins.sum(m.shape[1] for m in mats)
    out = _ts().zeros((rows, cols), dtype=dt, device=mats[0].device)
    r = c = 0
    for m in mats:
        if m.size:
            out[r:r + m.shape[0], c:c + m.shape[1]] = _C._astype(m, dt, False)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


METHODS = {"diag": diag, "diag_embed": diag_embed, "diagflat": diagflat}
