"""Padding layers (PyTorch's ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad
in 1-D, 2-D and 3-D) over nn.functional.pad."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Tuple

from ..._C import Tensor
from ..._C import pad
from .module import Module

_PadArg = _t.Union[int, _t.Sequence[int]]


class _PadNd(Module):
    """Pads the last `_nsp` dimensions; `padding` is an int or 2*_nsp values
    (left, right, top, bottom, front, back) like F.pad."""

    _nsp = 1
    _mode = "constant"

    def __init__(self, padding: _PadArg) -> None:
        super().__init__()
        name = type(self).__name__
        n = 2 * self._nsp
        if isinstance(padding, int):
            self.padding: Tuple[int, ...] = (padding,) * n
        else:
            self.padding = tuple(int(p) for p in padding)
            if len(self.padding) != n:
                raise ValueError(f"{name}: padding must be an int or {n} values, got {padding}")
        self.value = 0.0

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._nsp + 1, self._nsp + 2):
            raise ValueError(f"{type(self).__name__}: expected a {self._nsp + 1}-D or "
                             f"{self._nsp + 2}-D input, got shape {tuple(input.shape)}")
        return pad(input, self.padding, self._mode, self.value)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ConstantPad1d(_PadNd):
    """Pads the last dimension with `value`."""

    def __init__(self, padding: _PadArg, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        # Constant padding works on any rank with at least the padded dimensions.
        if input.ndim < self._nsp:
            raise ValueError(f"{type(self).__name__}: expected at least a {self._nsp}-D input, "
                             f"got shape {tuple(input.shape)}")
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad2d(ConstantPad1d):
    """Pads the last two dims with a constant `value`; padding an int or (left, right, top,
    bottom)."""
    _nsp = 2


class ConstantPad3d(ConstantPad1d):
    """Pads the last three dims with a constant `value`; padding an int or a 6-tuple."""
    _nsp = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dimension with zeros."""

    def __init__(self, padding: _PadArg) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    """Pads the last two dims with zeros; padding an int or (left, right, top, bottom)."""
    _nsp = 2


class ZeroPad3d(ZeroPad1d):
    """Pads the last three dims with zeros; padding an int or a 6-tuple."""
    _nsp = 3


class ReflectionPad1d(_PadNd):
    """Pads the last dim of (N, C, W) or (C, W) by reflection at the edges (the edge not
    repeated); padding an int or (left, right)."""
    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pads the last two dims of (N, C, H, W) or (C, H, W) by reflection; padding an int or
    (left, right, top, bottom)."""
    _nsp = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pads the last three dims of (N, C, D, H, W) or (C, D, H, W) by reflection; padding an
    int or a 6-tuple."""
    _nsp = 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim of (N, C, W) or (C, W) by repeating the edge value; padding an int
    or (left, right)."""
    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pads the last two dims of (N, C, H, W) or (C, H, W) by repeating the edge values;
    padding an int or (left, right, top, bottom)."""
    _nsp = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pads the last three dims of (N, C, D, H, W) or (C, D, H, W) by repeating the edge
    values; padding an int or a 6-tuple."""
    _nsp = 3


class CircularPad1d(_PadNd):
    """Pads the last dim of (N, C, W) or (C, W) circularly (wrapping around); padding an int
    or (left, right)."""
    _mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pads the last two dims of (N, C, H, W) or (C, H, W) circularly; padding an int or
    (left, right, top, bottom)."""
    _nsp = 2


class CircularPad3d(CircularPad1d):
    """Pads the last three dims of (N, C, D, H, W) or (C, D, H, W) circularly; padding an
    int or a 6-tuple."""
    _nsp = 3
