"""Searching: searchsorted (array API 2024.12); argmax/argmin/where/count_nonzero live in
_statistical, nonzero in _indexing."""
from __future__ import annotations

from typing import Any, Optional

from . import _C
from ._C import Tensor

__all__ = ["searchsorted"]


def searchsorted(x1: Tensor, x2: Any, /, *, side: str = "left",
                 sorter: Optional[Tensor] = None) -> Tensor:
    """Insertion points (int64, shape of x2) that keep the 1-d ascending `x1` sorted:
    ``side='left'`` gives the first such position (``x1[i-1] < v <= x1[i]``), ``'right'`` the
    last (``x1[i-1] <= v < x1[i]``). x1 and x2 are compared in their promoted dtype, with
    NaNs sorting last as in ``sort``. `sorter` (int indices) sorts x1 when it is not sorted
    itself (e.g. ``argsort(x1)``)."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return _C._searchsorted(x1, x2, side == "right", sorter)
