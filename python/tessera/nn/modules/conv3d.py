"""Conv3d and ConvTranspose3d (PyTorch's arguments, weights, init and repr; the math is in
functional/conv3d.py)."""
from __future__ import annotations

from typing import Any, Optional

from ..._C import Tensor
from ..functional.conv import _output_padding
from ..functional.conv3d import _conv3d, conv_transpose3d
from .conv import _ConvNd, _ConvTransposeNd, _lazy_conv, _lazy_conv_transpose


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W); weight (out, in/groups, kd, kh, kw)."""
    _nsp = 3

    def forward(self, input: Tensor) -> Tensor:
        return _conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                       self.groups, self.padding_mode, "conv3d")


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W); weight (C_in, C_out/groups, kd,
    kh, kw)."""
    _nsp = 3

    def forward(self, input: Tensor, output_size: Optional[Any] = None) -> Tensor:
        opad = self.output_padding if output_size is None else _output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, self.dilation, 3,
            "ConvTranspose3d")
        return conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, opad,
                                self.groups, self.dilation)


LazyConv3d = _lazy_conv(Conv3d, __name__)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, __name__)
