"""matmul, tensordot, vecdot, matrix_transpose (the array API's linear algebra core)."""
from __future__ import annotations

from typing import Any, Sequence, Union

from . import _C
from ._C import Tensor

__all__ = ["tensordot", "vecdot", "matrix_transpose"]


def tensordot(x1: Tensor, x2: Tensor, /, *, axes: Union[int, Sequence[Sequence[int]]] = 2) -> Tensor:
    """Contracts `axes` of x1 with those of x2: an int n (last n of x1 with first n of x2) or
    a pair of axis sequences."""
    if isinstance(axes, int):
        return _C._tensordot_n(x1, x2, axes)
    xa, xb = axes
    if isinstance(xa, int):
        xa, xb = [xa], [xb]
    return _C._tensordot_axes(x1, x2, list(xa), list(xb))


_UNSET: Any = object()


def vecdot(x1: Tensor, x2: Tensor, /, *, axis: int = -1, dim: Any = _UNSET) -> Tensor:
    """sum(conj(x1) * x2, axis) with broadcasting over the other dims. PyTorch's `dim=` is
    accepted too, counted in the broadcast shape (so a non-negative dim also works)."""
    if dim is not _UNSET:
        if axis != -1:
            raise TypeError("vecdot: pass either axis= or dim=, not both")
        nd = max(getattr(x1, "ndim", 0), getattr(x2, "ndim", 0))
        axis = dim - nd if isinstance(dim, int) and 0 <= dim < nd else dim
    return _C._vecdot(x1, x2, axis)


def matrix_transpose(x: Tensor, /) -> Tensor:
    """Swaps the last two axes (a view): (..., m, n) -> (..., n, m)."""
    return _C._matrix_transpose(x)
