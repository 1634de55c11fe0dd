"""Manipulation functions of the array API (views where possible), and PyTorch's shape
functions and methods (t, split/chunk/unbind, narrow/select, diag/diagonal/trace, the stacks,
cat, flatten/unsqueeze/transpose/movedim, ...): the namespace's names for the C++ functions,
which parse every argument form (csrc/python/bind_views.cpp, bind_manipulation.cpp)."""
from __future__ import annotations

# Every function of the family is parsed in C++ with all its argument forms (the standard's
# and PyTorch's names); those that are Tensor methods too are the same objects (Tensor.roll is
# ts.roll): csrc/python/bind_views.cpp, csrc/python/bind_manipulation.cpp.
from ._C import (as_strided, atleast_1d, atleast_2d, atleast_3d, block_diag, broadcast_arrays,
                 broadcast_shapes, broadcast_tensors, broadcast_to, cartesian_prod, cat, chunk,
                 column_stack, concat, concatenate, diag, diag_embed, diagflat, diagonal, dsplit,
                 dstack, expand_dims, flatten, flip, fliplr, flipud, hsplit, hstack, movedim,
                 moveaxis, narrow, narrow_copy, permute, permute_dims, ravel, repeat,
                 repeat_interleave, reshape, roll, rot90, row_stack, select, split,
                 split_with_sizes, squeeze, stack, swapaxes, swapdims, t, take_along_dim,
                 tensor_split, tile, trace, transpose, unbind, unflatten, unsqueeze, unstack,
                 vsplit, vstack)

__all__ = ["reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip",
           "moveaxis", "broadcast_arrays", "concat", "stack", "unstack", "roll", "repeat",
           "tile"]

# PyTorch's shape functions (pieces are views wherever torch returns views)
_TORCH_NAMES = ["split", "chunk", "tensor_split", "unbind", "repeat_interleave", "narrow",
                "select", "fliplr", "flipud", "rot90", "diag", "diagonal", "diag_embed", "diagflat",
                "trace", "unflatten", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
                "dstack", "column_stack", "row_stack", "broadcast_tensors", "broadcast_shapes",
                "cartesian_prod", "block_diag", "take_along_dim", "flatten", "unsqueeze", "permute",
                "transpose", "swapdims", "swapaxes", "movedim", "t", "ravel", "hsplit", "vsplit",
                "dsplit", "concatenate", "cat", "as_strided", "narrow_copy", "split_with_sizes"]  # PyTorch's
__all__ += _TORCH_NAMES
