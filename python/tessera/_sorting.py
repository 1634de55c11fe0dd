"""Sorting: sort / argsort (array API 2024.12) and PyTorch's topk, with Tensor methods.

Order (Note [Sort order] in csrc/ops/sort.h): ascending puts NaNs last (NumPy); descending
is the reverse order for distinct values, so NaNs come first (as PyTorch and
array-api-strict do), and equal elements keep their original order in both directions: the
sort is always stable (``stable=False`` is accepted and gives the same stable result).
Complex tensors raise TypeError (the standard leaves their order unspecified).
"""
from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

from . import _C
from ._C import Tensor

__all__ = ["sort", "argsort", "topk"]

_UNSET: Any = object()

SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])


def _axis(name: str, axis: int, dim: Any) -> int:
    if dim is _UNSET:
        return axis
    if axis != -1:
        raise TypeError(f"{name}: got both axis= and its alias dim=; pass one")
    return dim


def _check_flags(name: str, descending: Any, stable: Any) -> None:
    for flag, val in (("descending", descending), ("stable", stable)):
        if not isinstance(val, builtins.bool):
            raise TypeError(f"{name}: {flag} must be a bool, got {type(val).__name__}")


def sort(x: Tensor, /, *, axis: int = -1, descending: builtins.bool = False,
         stable: builtins.bool = True, dim: Any = _UNSET) -> Tensor:
    """Sorted copy of `x` along `axis` (``dim=`` is accepted as an alias). Same shape and
    dtype as x; a radix sort per row, parallel over rows."""
    _check_flags("sort", descending, stable)
    return _C._sort(x, _axis("sort", axis, dim), descending)


def argsort(x: Tensor, /, *, axis: int = -1, descending: builtins.bool = False,
            stable: builtins.bool = True, dim: Any = _UNSET) -> Tensor:
    """int64 indices that sort `x` along `axis` (``take_along_axis(x, argsort(x))`` is
    sorted); ties keep their original order."""
    _check_flags("argsort", descending, stable)
    return _C._argsort(x, _axis("argsort", axis, dim), descending)


def topk(input: Tensor, k: int, dim: int = -1, largest: builtins.bool = True,
         sorted: builtins.bool = True) -> TopkResult:
    """torch.topk: the `k` largest (``largest=False``: smallest) elements along `dim` as
    ``(values, indices)``, in sorted order (NaN counts as the largest value); among equal
    values the lower index comes first. ``sorted=False`` is accepted (the result is sorted
    anyway)."""
    if not isinstance(k, int) or isinstance(k, builtins.bool):
        raise TypeError(f"topk: k must be an int, got {type(k).__name__}")
    v, i = _C._topk(input, k, dim, largest)
    return TopkResult(v, i)


def _sort_method(self: Tensor, dim: int = -1, descending: builtins.bool = False,
                 stable: builtins.bool = True) -> SortResult:
    """torch.Tensor.sort: ``(values, indices)`` along `dim` (stable)."""
    v, i = _C._sort_with_indices(self, dim, descending)
    return SortResult(v, i)


def _argsort_method(self: Tensor, dim: int = -1, descending: builtins.bool = False,
                    stable: builtins.bool = True) -> Tensor:
    """torch.Tensor.argsort: int64 indices that sort along `dim` (stable)."""
    return _C._argsort(self, dim, descending)


def _topk_method(self: Tensor, k: int, dim: int = -1, largest: builtins.bool = True,
                 sorted: builtins.bool = True) -> TopkResult:
    return topk(self, k, dim, largest, sorted)


_topk_method.__doc__ = topk.__doc__
