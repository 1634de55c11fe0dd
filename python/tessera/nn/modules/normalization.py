"""Normalization layers (torch.nn.modules.normalization): LayerNorm, RMSNorm, GroupNorm,
LocalResponseNorm, CrossMapLRN2d (batch and instance norms are in batchnorm.py and
instancenorm.py)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Sequence, Union

from ..._C import Tensor
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _ts() -> Any:
    import tessera
    return tessera


def _affine_params(mod: Module, shape: tuple, affine: bool, bias: bool, dtype: Any) -> None:
    """Registers weight (ones) and bias (zeros) of `shape`, or None for each that is off."""
    t = _ts()
    mod.register_parameter("weight", Parameter(t.ones(shape, dtype=dtype)) if affine else None)
    mod.register_parameter("bias", Parameter(t.zeros(shape, dtype=dtype))
                           if affine and bias else None)


class LayerNorm(Module):
    """Layer normalization over the trailing `normalized_shape` dims: (x - mean) / sqrt(var
    + eps) * weight + bias; input (*, *normalized_shape)."""
    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._has_bias = bias
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self._has_bias}")


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing `normalized_shape` dims: x /
    sqrt(mean(x^2) + eps) * weight (eps None: the dtype's eps)."""
    def __init__(self, normalized_shape: Union[int, Sequence[int]], eps: Optional[float] = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_ts().ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        # torch's RMSNorm.forward names its input ``x`` (unlike LayerNorm's ``input``).
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Group normalization: (N, C, *) with C split into num_groups groups, each normalized
    over its channels and the spatial dims; affine per channel."""
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("GroupNorm: num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self._has_bias = bias
        _affine_params(self, (num_channels,), affine, bias, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self._has_bias}")


class LocalResponseNorm(Module):
    """Normalization over `size` neighbouring channels (AlexNet's LRN)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

class CrossMapLRN2d(LocalResponseNorm):
    """PyTorch's legacy cross-map LRN over (N, C, H, W): x * (k + alpha/size * S)^-beta,
    where S sums squares over the channel windows of the legacy running-sum recurrence
    (which differ from LocalResponseNorm's near the ends)."""

    def forward(self, input: Tensor) -> Tensor:
        import numpy as np
        t = _ts()
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4-D input (N, C, H, W), got shape "
                             f"{tuple(input.shape)}")
        c = input.shape[1]
        pre = int((self.size - 1) / 2 + 1)
        win = np.zeros((c, c))
        if c:
            win[0, :min(pre, c)] = 1
        for i in range(1, c):  # the recurrence of PyTorch's implementation, as a matrix
            win[i] = win[i - 1]
            if i < c - pre + 1:
                win[i, i + pre - 1] += 1
            if i > pre:
                win[i, i - pre] -= 1
        sq = t.moveaxis(input * input, 1, -1)
        sums = t.moveaxis(t.matmul(sq, t.asarray(win.T, device=input.device).astype(input.dtype)),
                          -1, 1)
        scale = sums * (self.alpha / self.size) + self.k
        return input * scale ** t.asarray(-self.beta, dtype=input.dtype, device=input.device)
