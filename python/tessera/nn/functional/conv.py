"""The window-size arguments of the convolution and pooling modules (nn/modules/conv.py,
pooling.py). F.pad, F.conv* and the modules' forward (padding_mode, output_size) are C++
bindings (csrc/python/bind_conv.cpp)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Tuple

_IntOrTuple = _t.Union[int, _t.Sequence[int]]


def _int(v: Any, name: str) -> int:
    """An int window argument; TypeError (as torch's) for floats, strings, None and the like."""
    if isinstance(v, bool) or not hasattr(v, "__index__"):
        raise TypeError(f"{name}: expected ints for the window sizes, got {type(v).__name__} "
                        f"({v!r})")
    return v.__index__()


def _ntuple(v: _IntOrTuple, n: int, name: str) -> Tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v,) * n
    if not isinstance(v, (tuple, list)):
        return (_int(v, name),) * n
    v = tuple(_int(a, name) for a in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name}: expected {n} values, got {v}")
    return v
