"""Adam and AdamW (PyTorch's updates, including amsgrad and maximize)."""
from __future__ import annotations

import math
from typing import Any, Dict, Tuple

from .._C import Tensor
from .optimizer import Optimizer


def _ts() -> Any:
    import tessera
    return tessera


def _check(lr: float, betas: Tuple[float, float], eps: float, weight_decay: float) -> None:
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameters: {betas}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
    p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps). Weight decay is L2 (added to g)."""

    _decoupled = False

    def __init__(self, params: Any, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        _check(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> None:
        t = _ts()
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        g = -grad if group["maximize"] else grad
        if not state:
            state["step"] = 0.0
            state["exp_avg"] = t.zeros_like(p)
            state["exp_avg_sq"] = t.zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = t.zeros_like(p)
        state["step"] += 1
        step = state["step"]
        if wd:
            if self._decoupled:
                p[...] = p * (1 - lr * wd)
            else:
                g = g + wd * p
        m = state["exp_avg"] + (g - state["exp_avg"]) * (1 - b1)  # PyTorch's lerp
        v = state["exp_avg_sq"] * b2 + (1 - b2) * g * g
        state["exp_avg"], state["exp_avg_sq"] = m, v
        bc1 = 1 - b1 ** step
        bc2_sqrt = math.sqrt(1 - b2 ** step)
        if group["amsgrad"]:
            vmax = t.maximum(state["max_exp_avg_sq"], v)
            state["max_exp_avg_sq"] = vmax
            denom = t.sqrt(vmax) / bc2_sqrt + eps
        else:
            denom = t.sqrt(v) / bc2_sqrt + eps
        p[...] = p - (lr / bc1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    _decoupled = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
