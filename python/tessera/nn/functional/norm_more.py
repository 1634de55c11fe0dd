"""instance_norm with PyTorch's signature (running statistics, use_input_stats) and
local_response_norm."""
from __future__ import annotations

import math
from typing import Any, Optional

from ..._C import Tensor
from ...amp import _policy as _amp
from .norm import batch_norm


def _ts() -> Any:
    import tessera
    return tessera


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None,
                  running_var: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                  bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes each (sample, channel) plane of (N, C, *) over its spatial axes. With
    use_input_stats and running buffers, the buffers move toward the batch means of the
    per-instance mean and unbiased variance; without use_input_stats the running statistics
    normalize. As in PyTorch: batch_norm over (1, N*C, *) with the stats repeated N times."""
    x, weight, bias = _amp.cast(_amp.FP32_CUDA, input, weight, bias)
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
