"""PixelShuffle, PixelUnshuffle (torch.nn.modules.pixelshuffle)."""
from __future__ import annotations

from ..._C import Tensor
from ..._C import pixel_shuffle, pixel_unshuffle
from .module import Module


class PixelShuffle(Module):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
