"""Adadelta (PyTorch's update)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _check_nonneg, _flags, _ts


class Adadelta(Optimizer):
    """v = rho v + (1-rho) g^2; d = sqrt(a + eps) / sqrt(v + eps) * g;
    a = rho a + (1-rho) d^2; p -= lr d. State: step, square_avg, acc_delta."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach: Optional[bool] = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_nonneg("Adadelta", learning_rate=lr, epsilon_value=eps,
                      weight_decay_value=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Adadelta: Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize,
                                      **_flags("Adadelta", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        _begin_step(p, state, "square_avg", "acc_delta")
        rho, eps = group["rho"], group["eps"]
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        v, a = state["square_avg"], state["acc_delta"]
        v.mul_(rho).add_((1 - rho) * (g * g))
        delta = t.sqrt(a + eps) / t.sqrt(v + eps) * g
        a.mul_(rho).add_((1 - rho) * (delta * delta))
        p.sub_(group["lr"] * delta)
