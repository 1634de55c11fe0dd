"""Conv1d, Conv2d and pooling layers (the math lives in functional/conv.py)."""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from ... import _C
from ..._C import Tensor
from .. import functional as F
from ..functional.conv import _ntuple, _output_padding, conv_padded
from .linear import _make_weight_bias, _reset_weight_bias
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


class _ConvNd(Module):
    """Convolution layers; `transposed` ones keep PyTorch's (in, out/groups, *k) weight."""
    _nsp = 0
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        if groups <= 0 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        modes = ("zeros",) if self._transposed else ("zeros", "reflect", "replicate", "circular")
        if padding_mode not in modes:
            raise ValueError(f"{name}: padding_mode must be one of {', '.join(modes)}, got "
                             f"{padding_mode!r}")
        n = self._nsp
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n, name)
        self.stride = _ntuple(stride, n, name)
        self.padding = padding if isinstance(padding, str) and not self._transposed \
            else _ntuple(padding, n, name)
        self.dilation = _ntuple(dilation, n, name)
        self.output_padding = _ntuple(output_padding, n, name)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if self._transposed \
            else (out_channels, in_channels // groups)
        _make_weight_bias(self, shape + self.kernel_size, bias, dtype, bias_size=out_channels)

    def reset_parameters(self) -> None:
        _reset_weight_bias(self)

    def forward(self, input: Tensor) -> Tensor:
        return conv_padded(input, self.weight, self.bias, self.stride, self.padding,
                           self.dilation, self.groups, self.padding_mode, self._nsp,
                           type(self).__name__.lower())

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        zeros = (0,) * self._nsp
        if self.padding != zeros:
            s += f", padding={self.padding}"
        if self.output_padding != zeros:
            s += f", output_padding={self.output_padding}"
        if self.dilation != (1,) * self._nsp:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L); weight (out, in/groups, k)."""
    _nsp = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W); weight (out, in/groups, kh, kw)."""
    _nsp = 2


class _ConvTransposeNd(_ConvNd):
    """Transposed convolution; weight (in, out/groups, *k) and bias (out,) as in PyTorch,
    initialized like it (kaiming-uniform with fan-in weight.shape[1] * prod(k))."""
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input: Tensor, output_size: Optional[Any] = None) -> Tensor:
        name = type(self).__name__
        opad = self.output_padding if output_size is None else _output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, self.dilation,
            self._nsp, name)
        return _C._conv_transpose(input, self.weight, self.bias, self.stride, self.padding, opad,
                                  self.groups, self.dilation, self._nsp, name.lower())


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C_in, L); weight (C_in, C_out/groups, k)."""
    _nsp = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C_in, H, W); weight (C_in, C_out/groups, kh, kw)."""
    _nsp = 2


class MaxPool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride if stride is not None \
            else kernel_size, padding
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(MaxPool2d):
    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool2d(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: Optional[int] = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(AvgPool2d):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        # PyTorch keeps 1-tuples here (its repr shows kernel_size=(2,))
        super().__init__(_ntuple(kernel_size, 1, "AvgPool1d"),
                         None if stride is None else _ntuple(stride, 1, "AvgPool1d"),
                         _ntuple(padding, 1, "AvgPool1d"), ceil_mode, count_include_pad)

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size: Union[int, Tuple[Optional[int], Optional[int]]]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_max_pool2d(input, self.output_size)
