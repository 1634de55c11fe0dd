"""gumbel_softmax (with the straight-through hard variant) and pdist (the C++ binding)."""
from __future__ import annotations

from typing import Any

from ... import _C
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


# pdist is the C++ binding (csrc/python/bind_distance.cpp)
pdist = _C.pdist
