"""Manipulation functions of the array API (views where possible), and PyTorch's shape
functions and methods (t, split/chunk/unbind, narrow/select, diag/diagonal/trace, the stacks,
cat, flatten/unsqueeze/transpose/movedim, ...)."""
from __future__ import annotations

import builtins
import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _C
from ._C import Tensor
# PyTorch's view functions, parsed in C++ (csrc/python/bind_views.cpp)
from ._C import flatten, movedim, permute, swapaxes, swapdims, t, transpose, unsqueeze
# concat / cat / concatenate and stack, every form parsed in C++ (bind_manipulation.cpp)
from ._C import cat, concat, concatenate, stack
from ._C import chunk, narrow, select, split, unbind
from ._tensor import _dim_index
from .autograd.function import Function, FunctionCtx

__all__ = ["reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip",
           "moveaxis", "broadcast_arrays", "concat", "stack", "unstack", "roll", "repeat",
           "tile"]


def reshape(x: Tensor, /, shape: Tuple[int, ...], *, copy: Optional[bool] = None) -> Tensor:
    """A view with `shape` when the strides allow (copy=None/False), else a copy; copy=True
    always copies, copy=False raises where a view is impossible."""
    if copy is None:
        mode = -1
    elif isinstance(copy, (bool, _np.bool_)):
        mode = 1 if copy else 0
    else:
        raise TypeError(f"reshape: copy must be True, False or None, got "
                        f"{type(copy).__name__} ({copy!r})")
    return _C._reshape(x, shape, mode)


def permute_dims(x: Tensor, /, axes: Tuple[int, ...]) -> Tensor:
    """A view with axes reordered: result.shape[i] == x.shape[axes[i]]."""
    return _C._permute_dims(x, axes)


def expand_dims(x: Tensor, /, axis: Union[int, Tuple[int, ...]] = 0, *,
                dim: Optional[int] = None) -> Tensor:
    """A view with a new size-1 axis at `axis` (in the result's numbering); `dim=` is
    PyTorch's name for it.

    A tuple of axes (the standard's next revision, and NumPy) inserts len(axis) axes; each
    position is in [-M, M) with M = x.ndim + len(axis) and must be unique.
    """
    axis = axis if dim is None else dim
    if not isinstance(axis, (tuple, list)):
        return _C._expand_dims(x, axis)
    m = x.ndim + len(axis)
    pos = []
    for a in axis:
        if not -m <= a < m:
            raise IndexError(f"expand_dims: axis {a} is out of bounds for the result of dimension {m}")
        pos.append(a % m)
    if len(set(pos)) != len(pos):
        raise ValueError(f"expand_dims: repeated axis in {tuple(axis)}")
    for p in sorted(pos):  # ascending: each insertion lands at its final position
        x = _C._expand_dims(x, p)
    return x


def squeeze(x: Tensor, /, axis: Union[int, Tuple[int, ...]] = None, *,
            dim: Union[int, Tuple[int, ...], None] = None) -> Tensor:
    """A view without the named size-1 axes (ValueError when a named axis is not size 1)."""
    axis = axis if dim is None else dim
    if axis is None:
        raise TypeError("squeeze: the axis to remove must be given (axis=...); hint: the method "
                        "x.squeeze() removes every size-1 axis like PyTorch")
    return _C._squeeze(x, axis)


def broadcast_to(x: Tensor, /, shape: Tuple[int, ...]) -> Tensor:
    """A read-through view of x broadcast to `shape` (stride 0 on broadcast dims)."""
    return _C._broadcast_to(x, shape)


def flip(x: Tensor, /, *, axis: Optional[Union[int, Tuple[int, ...]]] = None,
         dims: Optional[Union[int, Tuple[int, ...]]] = None) -> Tensor:
    """A view with the order of elements reversed along `axis` (all axes when None); `dims=`
    is PyTorch's name for it."""
    return _C._flip(x, axis if dims is None else dims)


def moveaxis(x: Tensor, source: Union[int, Sequence[int]], destination: Union[int, Sequence[int]], /) -> Tensor:
    """A view with axes moved from `source` to `destination`."""
    return _C._moveaxis(x, source, destination)


def broadcast_arrays(*arrays: Tensor) -> List[Tensor]:
    """Read-through views of the inputs broadcast to their common shape."""
    return _C._broadcast_arrays(arrays)


def unstack(x: Tensor, /, *, axis: int = 0, dim: Optional[int] = None) -> Tuple[Tensor, ...]:
    """Splits x along `axis` into a tuple of views, each without that axis."""
    return _C._unstack(x, dim if dim is not None else axis)


def roll(x: Tensor, /, shift: Union[int, Tuple[int, ...]], *,
         axis: Optional[Union[int, Tuple[int, ...]]] = None, dims: Any = None) -> Tensor:
    """Rolls elements along `axis` by `shift` (elements leaving one end come back at the other).

    axis=None rolls the flattened tensor and restores the shape. Tuples of shifts and axes pair
    up; a single shift applies to every listed axis. `dims=` is PyTorch's name for axis.
    """
    return _C._roll(x, shift, dims if dims is not None else axis)


def repeat(x: Tensor, repeats: Union[int, Tensor], /, *, axis: Optional[int] = None,
           dim: Optional[int] = None) -> Tensor:
    """Repeats each element `repeats` times along `axis` (of the flattened x when None).

    `repeats` is an int or a 1-D integer tensor with one count per element along the axis.
    """
    return _C._repeat(x, repeats, dim if dim is not None else axis)


def tile(x: Tensor, repetitions: Tuple[int, ...], /) -> Tensor:
    """x repeated `repetitions[i]` times along each axis i (the shorter of x.ndim and
    len(repetitions) is padded with leading 1s)."""
    return _C._tile(x, repetitions)


# ---- PyTorch-style Tensor methods (none clashes with a standard name).
def _dims_arg(dims: tuple) -> Any:
    return dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims




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
                "concatenate", "cat", "as_strided", "narrow_copy"]  # PyTorch's
__all__ += _TORCH_NAMES


def _ts() -> Any:
    import tessera
    return tessera


def _slice_along(x: Tensor, dim: int, start: int, stop: int, step: int = 1) -> Tensor:
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


def _check_nd(op: str, x: Tensor) -> None:
    if x.ndim == 0:
        raise RuntimeError(f"{op}: expected at least a 1-dimensional tensor")


_MAX_EMPTY_PIECES = 1 << 16


def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> Tuple[Tensor, ...]:
    """NumPy's array_split as views: an int n gives n pieces (the first size % n one longer);
    a list of indices gives the pieces between those split points."""
    _check_nd("tensor_split", input)
    d = _dim_index("tensor_split", dim, input.ndim)
    n = input.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.ndim > 1 or ios.dtype not in (_C.int64, _C.int32, _C.int16, _C.int8, _C.uint8):
            raise RuntimeError("tensor_split: indices_or_sections must be a 0-d or 1-d integer "
                               f"tensor, got {ios.dtype} of {ios.ndim} dims")
        ios = ios.item() if ios.ndim == 0 else ios.tolist()
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [int(i) for i in ios] + [n]
        out = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            a = builtins.min(builtins.max(a + n if a < 0 else a, 0), n)
            b = builtins.min(builtins.max(b + n if b < 0 else b, 0), n)
            out.append(_slice_along(input, d, a, builtins.max(a, b)))
        return tuple(out)
    from ._arg_checks import int_arg
    sections = int_arg("tensor_split", "sections", ios)
    if sections <= 0:
        raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {sections}")
    if sections > builtins.max(n, _MAX_EMPTY_PIECES):  # each piece is a Python object
        raise ValueError(f"tensor_split: {sections} sections for a dimension of size {n}; at "
                         f"most max(size, {_MAX_EMPTY_PIECES}) pieces can be returned")
    q, r = divmod(n, sections)
    out, start = [], 0
    for i in range(sections):
        size = q + (1 if i < r else 0)
        out.append(_slice_along(input, d, start, start + size))
        start += size
    return tuple(out)


def hsplit(input: Tensor, sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 1 (dim 0 for 1-D input); an int must divide the size evenly."""
    return _even_split("hsplit", input, sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input: Tensor, sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 0 of an at least 2-D tensor."""
    return _even_split("vsplit", input, sections, 0, 2)


def dsplit(input: Tensor, sections: Any) -> Tuple[Tensor, ...]:
    """tensor_split along dim 2 of an at least 3-D tensor."""
    return _even_split("dsplit", input, sections, 2, 3)


def _even_split(op: str, x: Tensor, sections: Any, dim: int, min_nd: int) -> Tuple[Tensor, ...]:
    if x.ndim < min_nd:
        raise RuntimeError(f"{op}: requires a tensor with at least {min_nd} dimension(s), but "
                           f"got a tensor with {x.ndim} dimensions")
    if isinstance(sections, builtins.int) and (sections == 0 or x.shape[dim] % sections):
        raise RuntimeError(f"{op}: attempted to split along dimension {dim}, but the size of the "
                           f"dimension {x.shape[dim]} is not divisible by the split_size {sections}")
    return tensor_split(x, sections, dim)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: Optional[int] = None, *,
                      output_size: Optional[int] = None) -> Tensor:
    """Repeats each element `repeats` times along `dim` (of the flattened input when None).
    With only a 1-D count tensor, repeats each index i counts[i] times."""
    if repeats is None:
        counts = input
        return _ts().repeat(_ts().arange(counts.shape[0], device=counts.device), counts)
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = int(repeats.item())
    if isinstance(repeats, builtins.int) and repeats < 0:
        raise RuntimeError(f"repeat_interleave: repeats can not be negative, got {repeats}")
    if dim is None:
        return _ts().repeat(_C._reshape(input, (-1,), -1), repeats, axis=0)
    return _ts().repeat(input, repeats, axis=_dim_index("repeat_interleave", dim, input.ndim))


def _unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """torch.Tensor.unfold: every `size`-long window along `dimension`, `step` apart, as a new
    last dim (a view sharing storage when autograd does not record, else a stacked copy)."""
    nd = self.ndim
    d = _dim_index("unfold", dimension, nd)
    n = self.shape[d] if nd else 1
    if size < 0 or size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    count = (n - size) // step + 1
    if nd == 0:
        return _C._reshape(self, (size,), -1)
    if self.requires_grad and _C.is_grad_enabled():
        wins = [_slice_along(self, d, i * step, i * step + size) for i in range(count)]
        if not wins:
            return _C._reshape(_slice_along(self, d, 0, 0), tuple(self.shape[:d]) + (0,) +
                               tuple(self.shape[d + 1:]) + (size,), -1)
        return _C._moveaxis(_ts().stack(wins, axis=d), d + 1, nd)
    shape = list(self.shape)
    strides = list(self.stride())
    shape[d] = count
    st = strides[d]
    strides[d] = st * step
    return _C._as_strided(self, tuple(shape) + (size,), tuple(strides) + (st,), self._offset)


def fliplr(input: Tensor) -> Tensor:
    """Reverses dim 1 (input must be at least 2-D)."""
    if input.ndim < 2:
        raise RuntimeError("fliplr: input must be >= 2-d")
    return _C._flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """Reverses dim 0 (input must be at least 1-D)."""
    if input.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d")
    return _C._flip(input, 0)


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotates by 90 degrees k times in the plane of `dims` (from the first toward the second)."""
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = (_dim_index("rot90", x, input.ndim) for x in dims)
    if a == b:
        raise RuntimeError(f"rot90: expected rotation dims to be different, got {a} and {b}")
    from ._arg_checks import int_arg
    k = int_arg("rot90", "k", k) % 4
    if k == 1:
        return _swap(_C._flip(input, b), a, b)
    if k == 2:
        return _C._flip(input, (a, b))
    if k == 3:
        return _C._flip(_swap(input, a, b), b)
    return input


def _swap(x: Tensor, a: int, b: int) -> Tensor:
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return _C._permute_dims(x, tuple(perm))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal (a view) of the (dim1, dim2) planes, as a new last dim; offset > 0 is
    above the main diagonal."""
    if input.ndim < 2:
        raise RuntimeError(f"diagonal: expected a tensor with at least 2 dimensions, got {input.ndim}")
    a, b = _dim_index("diagonal", dim1, input.ndim), _dim_index("diagonal", dim2, input.ndim)
    if a == b:
        raise RuntimeError(f"diagonal: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _C._diagonal(input, offset, a, b)


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


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor (integer input sums to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _ts().sum(_C._diagonal(input, 0, 0, 1))


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Splits dim `dim` into `sizes` (one entry may be -1)."""
    d = _dim_index("unflatten", dim, input.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    known = math.prod(s for s in sizes if s != -1)
    n = input.shape[d]
    if -1 in sizes:
        if sizes.count(-1) > 1 or known == 0 or n % known:
            raise RuntimeError(f"unflatten: provided sizes {sizes} don't multiply up to the size "
                               f"of dim {dim} ({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({n}) in the input tensor")
    return _C._reshape(input, tuple(input.shape[:d]) + sizes + tuple(input.shape[d + 1:]), -1)


def ravel(input: Tensor) -> Tensor:
    """The flattened input (a view when possible)."""
    return _C._reshape(input, (-1,), -1)


def _atleast(op: str, nd: int, tensors: tuple) -> Any:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(op, nd, (x,)) for x in tensors[0])
    if len(tensors) != 1:
        return tuple(_atleast(op, nd, (x,)) for x in tensors)
    x = tensors[0]
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected Tensors, got {type(x).__name__}")
    if x.ndim >= nd:
        return x
    if nd == 3 and x.ndim == 2:
        return _C._reshape(x, tuple(x.shape) + (1,), -1)
    if nd == 3:
        return _C._reshape(x, (1, x.size, 1), -1)
    return _C._reshape(x, (1,) * (nd - 1) + (x.size,), -1)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dim (0-D -> (1,)); a tuple for several inputs."""
    return _atleast("atleast_1d", 1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims ((n,) -> (1, n))."""
    return _atleast("atleast_2d", 2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    return _atleast("atleast_3d", 3, tensors)


def _seq(op: str, tensors: Any) -> List[Tensor]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a sequence of Tensors, got {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{op}: expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenates along dim 1 (dim 0 for 1-D inputs)."""
    ts_ = [atleast_1d(x) for x in _seq("hstack", tensors)]
    return concat(ts_, axis=0 if ts_[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenates the inputs made at least 2-D along dim 0."""
    return concat([atleast_2d(x) for x in _seq("vstack", tensors)], axis=0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Concatenates the inputs made at least 3-D along dim 2."""
    return concat([atleast_3d(x) for x in _seq("dstack", tensors)], axis=2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Stacks 0-D/1-D inputs as columns (n -> (n, 1)) and concatenates along dim 1."""
    cols = [_C._reshape(x, (x.size, 1), -1) if x.ndim <= 1 else x
            for x in _seq("column_stack", tensors)]
    return concat(cols, axis=1)


def broadcast_tensors(*tensors: Tensor) -> Tuple[Tensor, ...]:
    """Views of the inputs broadcast to their common shape."""
    return tuple(_C._broadcast_arrays(tensors))


def broadcast_shapes(*shapes: Any) -> Tuple[int, ...]:
    """The broadcast of the given shapes (ints count as 1-D shapes)."""
    out: List[int] = []
    for s in shapes:
        s = (s,) if isinstance(s, builtins.int) else tuple(s)
        if len(s) > len(out):
            out = [1] * (len(s) - len(out)) + out
        for i, n in enumerate(s):
            j = len(out) - len(s) + i
            if n < 0:
                raise RuntimeError(f"broadcast_shapes: trying to create tensor with negative "
                                   f"dimension {n}: {s}")
            if out[j] == 1:
                out[j] = n
            elif n not in (1, out[j]):
                raise RuntimeError(f"broadcast_shapes: shape mismatch: objects cannot be broadcast "
                                   f"to a single shape ({shapes})")
    return tuple(out)


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


def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    """Picks values along `dim` at `indices` (which broadcasts against input elsewhere); with
    dim None, from the flattened input."""
    if dim is None:
        return _ts().take_along_axis(ravel(input), ravel(indices), axis=0)
    d = _dim_index("take_along_dim", dim, input.ndim)
    if indices.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} and {indices.ndim}")
    shape_x = list(input.shape)
    shape_i = list(indices.shape)
    shape_x[d] = shape_i[d] = 1
    b = broadcast_shapes(shape_x, shape_i)
    xb = _C._broadcast_to(input, tuple(b[:d]) + (input.shape[d],) + tuple(b[d + 1:]))
    ib = _C._broadcast_to(indices, tuple(b[:d]) + (indices.shape[d],) + tuple(b[d + 1:]))
    return _ts().take_along_axis(xb, ib, axis=d)


def _roll(self: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Rolls along dims (the flattened tensor when dims is None)."""
    return _ts().roll(self, shifts, axis=dims)


METHODS = {
    "tensor_split": tensor_split, "repeat_interleave": repeat_interleave, "unfold": _unfold, "fliplr": fliplr, "flipud": flipud, "rot90": rot90,
    "diag": diag, "diagonal": diagonal, "diag_embed": diag_embed, "diagflat": diagflat,
    "trace": trace, "unflatten": unflatten, "ravel": ravel, "hsplit": hsplit, "vsplit": vsplit,
    "dsplit": dsplit, "take_along_dim": take_along_dim,
    "roll": _roll,
    "broadcast_to": lambda self, size: _C._broadcast_to(self, tuple(size)),
    "split_with_sizes": lambda self, split_sizes, dim=0: split(self, list(split_sizes), dim),
}


# ---- as_strided (differentiable) and narrow_copy
class _AsStrided(Function):
    """as_strided of a contiguous tensor; the gradient scatter-adds back to the elements read."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, size: tuple, stride: tuple, offset: int) -> Tensor:  # type: ignore[override]
        ctx.shape, ctx.size, ctx.stride, ctx.rel = tuple(x.shape), size, stride, offset - x._offset
        return _C._as_strided(x, size, stride, offset)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        pos = t.zeros(ctx.size, dtype=_C.int64) + ctx.rel
        for d, (n, s) in enumerate(zip(ctx.size, ctx.stride)):
            shape = [1] * len(ctx.size)
            shape[d] = n
            pos = pos + _C._reshape(t.arange(n) * s, tuple(shape), -1)
        flat = t.zeros((math.prod(ctx.shape),), dtype=g.dtype, device=g.device)
        flat = t.index_add(flat, 0, _C._reshape(pos, (-1,), -1), _C._reshape(g, (-1,), -1))
        return _C._reshape(flat, ctx.shape, -1), None, None, None


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: Optional[int] = None) -> Tensor:
    """A view of input's storage with the given size, strides (in elements) and offset
    (input's own offset when None). Differentiable for contiguous inputs."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape ({len(stride)} "
                           f"vs {len(size)})")
    if builtins.any(s < 0 for s in stride) or builtins.any(n < 0 for n in size):
        raise RuntimeError("as_strided: negative sizes or strides are not supported")
    offset = input._offset if storage_offset is None else int(storage_offset)
    if input.requires_grad and _C.is_grad_enabled():
        if not input.is_contiguous():
            raise NotImplementedError("as_strided: the gradient needs a contiguous input; hint: "
                                      "call .contiguous() first")
        return _AsStrided.apply(input, size, stride, offset)
    return _C._as_strided(input, size, stride, offset)


def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A copy of input.narrow(dim, start, length)."""
    return narrow(input, dim, start, length).clone()


# ---- torch.split_with_sizes
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> Tuple[Tensor, ...]:
    """Splits `input` along `dim` into pieces of `split_sizes` (which must sum to its size)."""
    if builtins.sum(split_sizes) != input.shape[dim]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[dim]} (input tensor's size at dimension {dim}), but "
                           f"got split_sizes={list(split_sizes)}")
    return tuple(input.split(list(split_sizes), dim))


_TORCH_NAMES += ["split_with_sizes"]
__all__ += ["split_with_sizes"]
