"""Convolution layers (torch.nn.modules.conv): Conv1d/2d/3d, ConvTranspose1d/2d/3d and their
lazy forms (the math, padding_mode and output_size are the C++ convolution ops':
_C._conv, _C._conv_transpose, csrc/python/bind_conv.cpp)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

from ... import _C
from ..._C import Tensor
from ..functional.conv import _ntuple
from .linear import _make_weight_bias, _reset_weight_bias
from .lazy import LazyModuleMixin, _lazy_hooks, _no_grad
from .module import Module
from .._uninitialized import UninitializedParameter


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
        if isinstance(self.padding, str):  # refused at construction, as PyTorch
            if self.padding not in ("valid", "same"):
                raise ValueError(f"{name}: invalid padding string {self.padding!r}, should be "
                                 f"one of {{'valid', 'same'}}")
            if self.padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions (stride {self.stride})")
        self.output_padding = _ntuple(output_padding, n, name)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if self._transposed \
            else (out_channels, in_channels // groups)
        _make_weight_bias(self, shape + self.kernel_size, bias, dtype, bias_size=out_channels)

    def reset_parameters(self) -> None:
        _reset_weight_bias(self)

    def forward(self, input: Tensor) -> Tensor:
        return _C._conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups, self._nsp, type(self).__name__.lower(), self.padding_mode)

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


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W); weight (out, in/groups, kd, kh, kw)."""
    _nsp = 3


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
        opad = self.output_padding if output_size is None else \
            _C._conv_transpose_output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, self.dilation, self._nsp, name)
        return _C._conv_transpose(input, self.weight, self.bias, self.stride, self.padding, opad,
                                  self.groups, self.dilation, self._nsp, name.lower())


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C_in, L); weight (C_in, C_out/groups, k)."""
    _nsp = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C_in, H, W); weight (C_in, C_out/groups, kh, kw)."""
    _nsp = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W); weight (C_in, C_out/groups, kd,
    kh, kw)."""
    _nsp = 3


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels from the first input: dim 1 when batched, dim 0 when unbatched."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:  # type: ignore
            super().reset_parameters()  # type: ignore[misc]

    def _get_in_channels(self, input: Tensor) -> int:
        nd = self._nsp + 1  # type: ignore[attr-defined]
        if input.ndim not in (nd, nd + 1):
            raise RuntimeError(f"Expected {nd}D (unbatched) or {nd + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"{tuple(input.shape)}")
        return input.shape[1] if input.ndim == nd + 1 else input.shape[0]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:  # type: ignore[attr-defined]
            raise ValueError("in_channels must be divisible by groups")
        k = tuple(self.kernel_size)  # type: ignore[attr-defined]
        g, out = self.groups, self.out_channels  # type: ignore[attr-defined]
        shape = (self.in_channels, out // g) + k if self._transposed \
            else (out, self.in_channels // g) + k  # type: ignore[attr-defined]
        with _no_grad():
            self.weight.materialize(shape)  # type: ignore[attr-defined]
            if self.bias is not None:  # type: ignore[attr-defined]
                self.bias.materialize((out,))  # type: ignore[attr-defined]
            self.reset_parameters()

def _lazy_conv_init(mod: Module, out_channels: int, bias: bool, device: Any,
                    dtype: Any) -> None:
    mod.weight = UninitializedParameter(device=device, dtype=dtype)
    mod.out_channels = out_channels
    if bias:
        mod.bias = UninitializedParameter(device=device, dtype=dtype)

def _lazy_conv(base: type) -> Any:
    """LazyConv{1,2,3}d's __init__: torch's signature without in_channels."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                      padding_mode)
        _lazy_hooks(self)
        _lazy_conv_init(self, out_channels, bias, device, dtype)

    return __init__

def _lazy_conv_transpose(base: type) -> Any:
    """LazyConvTranspose{1,2,3}d's __init__: torch's signature without in_channels."""

    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        base.__init__(self, 0, 0, kernel_size, stride, padding, output_padding, groups, False,
                      dilation, padding_mode)
        _lazy_hooks(self)
        _lazy_conv_init(self, out_channels, bias, device, dtype)

    return __init__


# Written out (not made in a loop) so that the API reference, read statically, lists them.
class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """Conv1d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = Conv1d
    __init__ = _lazy_conv(Conv1d)


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """Conv2d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = Conv2d
    __init__ = _lazy_conv(Conv2d)


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """Conv3d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = Conv3d
    __init__ = _lazy_conv(Conv3d)


class LazyConvTranspose1d(_LazyConvXdMixin, ConvTranspose1d):
    """ConvTranspose1d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = ConvTranspose1d
    __init__ = _lazy_conv_transpose(ConvTranspose1d)


class LazyConvTranspose2d(_LazyConvXdMixin, ConvTranspose2d):
    """ConvTranspose2d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = ConvTranspose2d
    __init__ = _lazy_conv_transpose(ConvTranspose2d)


class LazyConvTranspose3d(_LazyConvXdMixin, ConvTranspose3d):
    """ConvTranspose3d whose in_channels comes from the first input (dim 1, or dim 0 unbatched)."""
    cls_to_become = ConvTranspose3d
    __init__ = _lazy_conv_transpose(ConvTranspose3d)
