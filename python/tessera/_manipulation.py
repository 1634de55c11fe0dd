"""Manipulation functions of the array API (views where possible)."""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from . import _C
from ._C import Tensor

__all__ = ["reshape", "permute_dims", "expand_dims", "squeeze", "broadcast_to", "flip",
           "moveaxis"]


def reshape(x: Tensor, /, shape: Tuple[int, ...], *, copy: Optional[bool] = None) -> Tensor:
    """A view with `shape` when the strides allow (copy=None/False), else a copy."""
    return _C._reshape(x, shape, {None: -1, False: 0, True: 1}[copy])


def permute_dims(x: Tensor, /, axes: Tuple[int, ...]) -> Tensor:
    """A view with axes reordered: result.shape[i] == x.shape[axes[i]]."""
    return _C._permute_dims(x, axes)


def expand_dims(x: Tensor, /, axis: int = 0) -> Tensor:
    """A view with a new size-1 axis at `axis` (in the result's numbering)."""
    return _C._expand_dims(x, axis)


def squeeze(x: Tensor, /, axis: Union[int, Tuple[int, ...]]) -> Tensor:
    """A view without the named size-1 axes."""
    return _C._squeeze(x, axis)


def broadcast_to(x: Tensor, /, shape: Tuple[int, ...]) -> Tensor:
    """A read-through view of x broadcast to `shape` (stride 0 on broadcast dims)."""
    return _C._broadcast_to(x, shape)


def flip(x: Tensor, /, *, axis: Optional[Union[int, Tuple[int, ...]]] = None) -> Tensor:
    """A view with the order of elements reversed along `axis` (all axes when None)."""
    return _C._flip(x, axis)


def moveaxis(x: Tensor, source: Union[int, Sequence[int]], destination: Union[int, Sequence[int]], /) -> Tensor:
    """A view with axes moved from `source` to `destination`."""
    return _C._moveaxis(x, source, destination)
