"""Adamax (Adam with the infinity norm; PyTorch's update)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _check_nonneg, _flags, _ts


class Adamax(Optimizer):
    """m = lerp(m, g, 1-b1); u = max(b2 u, |g| + eps); p -= lr/(1-b1^t) * m / u.
    Weight decay is L2 (added to g). State: step (0-d float32), exp_avg, exp_inf."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 2e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_nonneg("Adamax", learning_rate=lr, epsilon_value=eps,
                      weight_decay_value=weight_decay)
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"Adamax: Invalid beta parameter at index {i}: {b}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize,
                                      **_flags("Adamax", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        step = _begin_step(p, state, "exp_avg", "exp_inf")
        b1, b2 = group["betas"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        m = state["exp_avg"]
        m.add_((g - m) * (1 - b1))
        u = state["exp_inf"] = t.maximum(state["exp_inf"] * b2, t.abs(g) + group["eps"])
        p.add_((-group["lr"] / (1 - b1 ** step)) * (m / u))
