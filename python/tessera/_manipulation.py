"""Manipulation functions of the array API (views where possible)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as _np

from . import _C
from ._C import Tensor

__all__ = ["reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip",
           "moveaxis", "broadcast_arrays", "concat", "cat", "stack", "unstack", "roll", "repeat",
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


def concat(arrays: Union[Tuple[Tensor, ...], List[Tensor]], /, *, axis: Optional[int] = 0,
           dim: Optional[int] = None) -> Tensor:
    """Joins tensors along an existing axis; shapes must match except along `axis`.

    axis=None flattens every input first. The result's dtype is the promotion of the inputs'.
    `dim=` is PyTorch's name for axis.
    """
    return _C._concat(arrays, dim if dim is not None else axis)


cat = concat


def stack(arrays: Union[Tuple[Tensor, ...], List[Tensor]], /, *, axis: int = 0,
          dim: Optional[int] = None) -> Tensor:
    """Joins same-shape tensors along a new axis: k tensors of shape S -> shape S with k
    inserted at `axis`."""
    return _C._stack(arrays, dim if dim is not None else axis)


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


def _flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merges dims start_dim..end_dim into one (a view when the strides allow)."""
    if self.ndim == 0:
        return _C._reshape(self, (1,), -1)
    s, e = start_dim, end_dim
    for v in (s, e):
        if not -self.ndim <= v < self.ndim:
            raise IndexError(f"flatten: dimension {v} is out of range for a tensor of dimension {self.ndim}")
    s, e = s % self.ndim, e % self.ndim
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    merged = 1
    for n in self.shape[s:e + 1]:
        merged *= n
    shape = self.shape[:s] + (merged,) + self.shape[e + 1:]
    return _C._reshape(self, shape, -1)


def _unsqueeze(self: Tensor, dim: int) -> Tensor:
    return _C._expand_dims(self, dim)


def _squeeze_method(self: Tensor, dim: Any = None, *, axis: Any = None) -> Tensor:
    """torch semantics: no dim squeezes every size-1 dim; a named dim that is not size 1 is
    left alone."""
    dim = axis if dim is None else dim
    if dim is None:
        return _C._squeeze(self, tuple(i for i, n in enumerate(self.shape) if n == 1))
    dims = (dim,) if not isinstance(dim, (tuple, list)) else tuple(dim)
    nd = builtins_max(self.ndim, 1)
    for d in dims:
        if not -nd <= d < nd:
            raise IndexError(f"squeeze: dimension {d} is out of range for a tensor of dimension {self.ndim}")
    if self.ndim == 0:
        return self
    keep = tuple(sorted({d % self.ndim for d in dims if self.shape[d % self.ndim] == 1}))
    return _C._squeeze(self, keep)


def _expand(self: Tensor, *sizes: Any, size: Any = None, implicit: bool = False) -> Tensor:
    """A broadcast view with `sizes` (or torch's size=); -1 keeps a dim; new dims may be
    added in front."""
    if size is not None:
        if sizes:
            raise TypeError("expand() got multiple values for argument 'size'")
        sizes = (size,)
    sizes = tuple(_dims_arg(sizes))
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise ValueError(f"expand: the number of sizes ({len(sizes)}) must be at least the tensor's "
                         f"dimension ({self.ndim})")
    shape = []
    for i, n in enumerate(sizes):
        if n == -1:
            if i < lead:
                raise ValueError(f"expand: -1 is not allowed for the new leading dimension {i}")
            n = self.shape[i - lead]
        shape.append(n)
    return _C._broadcast_to(self, tuple(shape))


def _flip_method(self: Tensor, *order: Any, dims: Any = None) -> Tensor:
    if dims is not None:
        if order:
            raise TypeError("flip() got multiple values for argument 'dims'")
        order = (dims,)
    dims = _dims_arg(order)
    return _C._flip(self, dims if dims != () else None)


def _movedim(self: Tensor, source: Any, destination: Any) -> Tensor:
    return _C._moveaxis(self, source, destination)


def _swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    perm = list(range(self.ndim))
    for v in (axis0, axis1):
        if not -self.ndim <= v < self.ndim:
            raise IndexError(f"swapaxes: axis {v} is out of bounds for a tensor of dimension {self.ndim}")
    a, b = axis0 % self.ndim, axis1 % self.ndim
    perm[a], perm[b] = perm[b], perm[a]
    return _C._permute_dims(self, perm)


builtins_max = max

