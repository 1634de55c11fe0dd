"""gumbel_softmax (with the straight-through hard variant) and pdist."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._C import Tensor
from .. import _rng
from .activation import softmax


def _ts() -> Any:
    import tessera
    return tessera


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); with hard=True the forward value is
    the one-hot argmax and the gradient is the soft sample's (straight-through)."""
    t = _ts()
    u = _rng.uniform(0.0, 1.0, tuple(logits.shape), logits.dtype).to(logits.device)
    # -log(Exponential(1)) with the exponential drawn as -log(1 - u), u in [0, 1)
    gumbels = -t.log(-t.log1p(-u))
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    axis = dim % logits.ndim if logits.ndim else 0
    idx = t.argmax(y_soft.detach(), axis=axis, keepdims=True)
    positions = t.reshape(t.arange(logits.shape[axis], device=logits.device),
                          (-1,) + (1,) * (logits.ndim - 1 - axis))
    y_hard = (positions == idx).astype(logits.dtype)
    return y_hard - y_soft.detach() + y_soft


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, for all pairs i < j in
    row-major order: shape (N (N - 1) / 2,). Zero distances get zero gradient (PyTorch)."""
    t = _ts()
    x = input
    if x.ndim != 2:
        raise ValueError(f"pdist: expected a 2-D input (N, M), got shape {tuple(x.shape)}")
    if p < 0:
        raise ValueError(f"pdist: p must be non-negative, got {p}")
    i, j = np.triu_indices(x.shape[0], 1)
    d = t.take(x, t.asarray(i, device=x.device), axis=0) - \
        t.take(x, t.asarray(j, device=x.device), axis=0)
    a = t.abs(d)
    if p == 0:
        return t.sum((a != 0).astype(x.dtype) + 0 * a, axis=-1)  # zero gradient, still tracked
    if p == math.inf:
        return t.max(a, axis=-1) if x.shape[1] else t.zeros((len(i),), dtype=x.dtype)
    if p == 1:
        return t.sum(a, axis=-1)
    if p == 2:
        s = t.sum(d * d, axis=-1)
    else:  # |d|^p with zero gradient at d == 0 (the derivative diverges there for p < 1)
        nz = a > 0
        s = t.sum(t.where(nz, t.where(nz, a, 1.0) ** p, 0.0), axis=-1)
    pos = s > 0
    safe = t.where(pos, s, 1.0)
    root = t.sqrt(safe) if p == 2 else safe ** (1.0 / p)
    return t.where(pos, root, 0.0)
