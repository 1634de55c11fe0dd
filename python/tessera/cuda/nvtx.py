"""NVTX markers for profilers such as Nsight Systems (torch.cuda.nvtx): ranges and marks show
on the timeline. Without CUDA each raises a RuntimeError, as torch's do."""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t

from .. import _C

_c = _C._cuda

__all__ = ["range_push", "range_pop", "mark", "range"]


def range_push(msg: str) -> int:
    """Opens a nested range named `msg`; returns its depth (0-based)."""
    return _c.nvtx_range_push(msg)


def range_pop() -> int:
    """Closes the innermost open range; returns the depth it had."""
    return _c.nvtx_range_pop()


def mark(msg: str) -> None:
    """An instant marker named `msg`."""
    _c.nvtx_mark(msg)


@_contextlib.contextmanager
def range(msg: str, *args: _t.Any, **kwargs: _t.Any) -> _t.Iterator[None]:
    """The block as a range named msg.format(*args, **kwargs)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
