"""Pooling layers (torch.nn.modules.pooling): max, average, adaptive, LP, fractional max
pooling and max unpooling."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Tuple, Union

from ..._C import Tensor
from .. import functional as F
from .module import Module
from ..functional.conv import _ntuple


class MaxPool2d(Module):
    """Max pooling over windows of (N, C, H, W) or (C, H, W) (kernel_size, stride, padding,
    dilation, ceil_mode); return_indices gives the argmax positions too."""
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
    """Max pooling over windows of (N, C, L) or (C, L) (kernel_size, stride, padding,
    dilation, ceil_mode); return_indices gives the argmax positions too."""
    def forward(self, input: Tensor) -> Tensor:
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

class AvgPool2d(Module):
    """Average pooling over windows of (N, C, H, W) or (C, H, W) (kernel_size, stride,
    padding, ceil_mode, count_include_pad, divisor_override)."""
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
    """Average pooling over windows of (N, C, L) or (C, L) (kernel_size, stride, padding,
    ceil_mode, count_include_pad)."""
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
    """Average pooling to a fixed output size: (N, C, H, W) or (C, H, W) -> (..., H_out,
    W_out)."""
    def __init__(self, output_size: Union[int, Tuple[Optional[int], Optional[int]]]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling to a fixed output length: (N, C, L) or (C, L) -> (..., output_size)."""
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool1d(input, self.output_size)


class MaxPool3d(MaxPool2d):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input: Tensor) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

class AvgPool3d(AvgPool2d):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Average pooling to a fixed output size: (N, C, D, H, W) or (C, D, H, W) -> (...,
    D_out, H_out, W_out)."""
    def forward(self, input: Tensor) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)

class _AdaptiveMaxPool(Module):
    _fn: Any = None

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling to a fixed output length: (N, C, L) or (C, L) -> (..., output_size);
    return_indices gives the argmax positions too."""
    _fn = staticmethod(F.adaptive_max_pool1d)

class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling to a fixed output size: (N, C, D, H, W) or (C, D, H, W) -> (..., D_out,
    H_out, W_out); return_indices gives the argmax positions too."""
    _fn = staticmethod(F.adaptive_max_pool3d)

class _MaxUnpoolNd(Module):
    _nsp = 1
    _fn: Any = None

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, self._nsp, name)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nsp, name)
        self.padding = _ntuple(padding, self._nsp, name)

    def forward(self, input: Tensor, indices: Tensor, output_size: Optional[Any] = None) -> Tensor:
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

class MaxUnpool1d(_MaxUnpoolNd):
    """The inverse of MaxPool1d: scatters values to the positions its indices name, zeros
    elsewhere; (N, C, L_in) -> (N, C, L_out)."""
    _fn = staticmethod(F.max_unpool1d)

class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of MaxPool2d: scatters values to the positions its indices name, zeros
    elsewhere; (N, C, H_in, W_in) -> (N, C, H_out, W_out)."""
    _nsp = 2
    _fn = staticmethod(F.max_unpool2d)

class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of MaxPool3d: scatters values to the positions its indices name, zeros
    elsewhere; (N, C, D, H, W) in and out."""
    _nsp = 3
    _fn = staticmethod(F.max_unpool3d)

class _LPPoolNd(Module):
    _fn: Any = None

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")

class LPPool1d(_LPPoolNd):
    """Power-average pooling (sum of x^p over each window)^(1/p) of (N, C, L) or (C, L)."""
    _fn = staticmethod(F.lp_pool1d)

class LPPool2d(_LPPoolNd):
    """Power-average pooling (sum of x^p over each window)^(1/p) of (N, C, H, W) or (C, H,
    W)."""
    _fn = staticmethod(F.lp_pool2d)

class LPPool3d(_LPPoolNd):
    """Power-average pooling (sum of x^p over each window)^(1/p) of (N, C, D, H, W) or (C,
    D, H, W)."""
    _fn = staticmethod(F.lp_pool3d)

class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Adaptive max pooling over (N, C, H, W) or (C, H, W), optionally with indices."""
    _fn = staticmethod(F.adaptive_max_pool2d)

class _FractionalMaxPoolNd(Module):
    """Fractional max pooling; `_random_samples` (a buffer, None by default) fixes the
    windows, else they are drawn per call."""
    _nsp = 2
    _fn: Any = None

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(kernel_size, self._nsp, name)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _ntuple(output_size, self._nsp, name)
        self.output_ratio = None
        if output_ratio is not None:
            ratio = (output_ratio,) * self._nsp if isinstance(output_ratio, (int, float)) \
                else tuple(output_ratio)
            if not all(0 < r < 1 for r in ratio):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
            self.output_ratio = ratio
        if self.output_size is None and self.output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if self.output_size is not None and self.output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")

    def forward(self, input: Tensor) -> Any:
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)

class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) to output_size or output_ratio,
    with pseudo-random window starts."""
    _fn = staticmethod(F.fractional_max_pool2d)

class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, D, H, W) or (C, D, H, W) to output_size or
    output_ratio, with pseudo-random window starts."""
    _nsp = 3
    _fn = staticmethod(F.fractional_max_pool3d)
