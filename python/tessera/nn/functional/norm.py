"""Normalizations: batch, layer, RMS, group, instance and local-response norms, and vector
normalize."""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

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


layer_norm = _C.layer_norm  # the C++ ops themselves (csrc/python/bind_nn.cpp)
rms_norm = _C.rms_norm


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
    x, weight, bias = _amp.cast("group_norm", x, weight, bias)
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


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None,
                  running_var: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                  bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes each (sample, channel) plane of (N, C, *) over its spatial axes. With
    use_input_stats and running buffers, the buffers move toward the batch means of the
    per-instance mean and unbiased variance; without use_input_stats the running statistics
    normalize. As in PyTorch: batch_norm over (1, N*C, *) with the stats repeated N times."""
    x, weight, bias = _amp.cast("instance_norm", input, weight, bias)
    t = _ts()
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, *), got "
                         f"shape {tuple(x.shape)}")
    n, c = x.shape[0], x.shape[1]
    if use_input_stats and math.prod(x.shape[2:]) <= 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element per channel, "
                         f"got input shape {tuple(x.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError("instance_norm: running_mean and running_var are required when "
                         "use_input_stats=False")

    def rep(v: Optional[Tensor]) -> Optional[Tensor]:
        return None if v is None else t.tile(v, (n,))

    rm, rv = rep(running_mean), rep(running_var)
    y = batch_norm(t.reshape(x, (1, n * c) + tuple(x.shape[2:])), rm, rv, rep(weight),
                   rep(bias), use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None and running_var is not None:
        with t.no_grad():  # the N updated copies average back into the buffers
            running_mean[...] = t.mean(t.reshape(rm, (n, c)), axis=0)
            running_var[...] = t.mean(t.reshape(rv, (n, c)), axis=0)
    return t.reshape(y, tuple(x.shape))


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (the window
    [c - size//2, c + (size-1)//2], zero-padded, always divided by size)."""
    t = _ts()
    x = input
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected a 3-D or higher input (N, C, *), got "
                         f"shape {tuple(x.shape)}")
    if size < 1:
        raise ValueError(f"local_response_norm: size must be positive, got {size}")
    if x.size == 0:
        return x
    from .conv import pad
    sq = x * x
    c = x.shape[1]
    flat = [0, 0] * (x.ndim - 2) + [size // 2, (size - 1) // 2]
    sp = pad(sq, flat)
    acc = None
    for j in range(size):
        part = sp[:, j:j + c]
        acc = part if acc is None else acc + part
    div = (acc * (alpha / size) + k) ** t.asarray(beta, dtype=x.dtype, device=x.device)
    return x / div


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim` (torch's clamp_min: the norm's gradient passes where
    it is >= eps; the norm's own gradient is 0 at a zero vector, so that gives g / eps)."""
    t = _ts()
    norm = t.linalg.vector_norm(input, ord=p, axis=dim, keepdims=True)
    return input / t.where(norm < eps, eps, norm)
