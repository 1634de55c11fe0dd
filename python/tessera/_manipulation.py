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
                 concat, concatenate, diag, diag_embed, diagflat, diagonal, dsplit, dstack, expand_dims, flatten, flip, fliplr,
                 flipud, hsplit, hstack, movedim, moveaxis, narrow, narrow_copy, permute,
                 permute_dims, ravel, repeat, repeat_interleave, reshape, roll, rot90, row_stack,
                 select, split, split_with_sizes, squeeze, stack, swapaxes, swapdims, t,
                 take_along_dim, tensor_split, tile, trace, transpose, unbind, unflatten,
                 unsqueeze, unstack, vsplit, vstack)

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

