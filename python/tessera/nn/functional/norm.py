"""Normalizations: batch, layer, RMS, group, and vector normalize."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

from ... import _C
from ..._C import Tensor
from ...amp import _policy as _amp


def _ts() -> Any:
    import tessera
    return tessera


def _channel_shape(x: Tensor) -> Tuple[int, ...]:
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes (N, C, *) over every axis but 1 (one fused C++ op, statistics in float32
    for 16-bit inputs). In training, batch statistics are used and the running ones (if
    given) are updated in place: running = (1-m) running + m batch, with the unbiased batch
    variance, as PyTorch does; in eval, the running statistics."""
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm: running_mean and running_var are required in eval mode")
    return _C._batch_norm(input, running_mean, running_var, weight, bias, training,
                          0.0 if momentum is None else momentum, eps)


def _affine(y: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
            shape: Tuple[int, ...]) -> Tensor:
    """y * weight + bias with the (C,) parameters reshaped to `shape` (channel axis 1)."""
    t = _ts()
    if weight is not None:
        y = y * t.reshape(weight, shape)
    if bias is not None:
        y = y + t.reshape(bias, shape)
    return y


def layer_norm(input: Tensor, normalized_shape: Union[int, Sequence[int]],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5) -> Tensor:
    """Normalizes over the trailing `normalized_shape` dims of (*, *normalized_shape), then
    scales by weight and shifts by bias (each of normalized_shape). The C++ op
    csrc/ops/nn/norm.h: one fused kernel, gradients of every order."""
    return _C.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: Union[int, Sequence[int]],
             weight: Optional[Tensor] = None, eps: Optional[float] = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing `normalized_shape` dims; eps
    defaults to the dtype's machine epsilon (the C++ op csrc/ops/nn/norm.h)."""
    return _C.rms_norm(input, normalized_shape, weight, eps)


class GroupNormError(ValueError, RuntimeError):
    """Channels not divisible into the groups: PyTorch raises RuntimeError, and a ValueError
    is what the argument error is; both catch it."""


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Normalizes each of `num_groups` channel groups of (N, C, ...) over its channels and
    positions, then scales/shifts per channel."""
    if input.ndim >= 2 and input.shape[1] % num_groups == 0:
        # PyTorch's _verify_batch_size: one value per group gives no variance.
        size = [input.shape[0] * input.shape[1] // num_groups, num_groups] + list(input.shape[2:])
        if math.prod(size[:1] + size[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {size}")
    return _group_norm(input, num_groups, weight, bias, eps)


def _group_norm(x: Tensor, num_groups: int, weight: Optional[Tensor], bias: Optional[Tensor],
                eps: float) -> Tensor:
    x, weight, bias = _amp.cast(_amp.FP32_CUDA, x, weight, bias)
    t = _ts()
    if x.ndim < 2 or x.shape[1] % num_groups:
        raise GroupNormError(f"group_norm: {x.shape[1] if x.ndim > 1 else '?'} channels of "
                             f"input shape {tuple(x.shape)} are not divisible into {num_groups} "
                             f"groups")
    shape = _channel_shape(x)
    if x.size == 0:
        return _affine(x, weight, bias, shape)
    n = x.shape[0]
    per_group = x.size // (n * num_groups)
    if per_group > 1 and t.isdtype(x.dtype, "real floating"):
        # The batch-norm kernels: (N, G, rest) seen as a batch of one with N*G channels.
        g = t.reshape(x, (1, n * num_groups, per_group))
        y = t.reshape(_C._batch_norm(g, None, None, None, None, True, 0.0, eps), tuple(x.shape))
        return _affine(y, weight, bias, shape)
    g = t.reshape(x, (n, num_groups, -1))
    mean = t.mean(g, axis=-1, keepdims=True)
    var = t.var(g, axis=-1, keepdims=True)
    y = t.reshape((g - mean) / t.sqrt(var + eps), tuple(x.shape))
    return _affine(y, weight, bias, shape)


def instance_norm(x: Tensor, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                  eps: float = 1e-5) -> Tensor:
    return _group_norm(x, x.shape[1], weight, bias, eps)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim` (torch's clamp_min: the norm's gradient passes where
    it is >= eps; the norm's own gradient is 0 at a zero vector, so that gives g / eps)."""
    t = _ts()
    norm = t.linalg.vector_norm(input, ord=p, axis=dim, keepdims=True)
    return input / t.where(norm < eps, eps, norm)
