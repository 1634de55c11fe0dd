"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (over nn.functional.interpolate)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from ..._C import Tensor
from ..functional.interp import _ScaleArg, _SizeArg, interpolate
from .module import Module


class Upsample(Module):
    """Resamples (N, C, *spatial) input to `size` or by `scale_factor` with `mode`."""

    def __init__(self, size: _SizeArg = None, scale_factor: _ScaleArg = None, mode: str = "nearest",
                 align_corners: Optional[bool] = None,
                 recompute_scale_factor: Optional[bool] = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling of (N, C, H, W)."""

    def __init__(self, size: _SizeArg = None, scale_factor: _ScaleArg = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling of (N, C, H, W) with align_corners=True."""

    def __init__(self, size: _SizeArg = None, scale_factor: _ScaleArg = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
