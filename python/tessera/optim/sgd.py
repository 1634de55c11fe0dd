"""SGD with momentum, dampening, Nesterov, weight decay, maximize (PyTorch's update)."""
from __future__ import annotations

from typing import Any, Dict

from .._C import Tensor
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> None:
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        mu = group["momentum"]
        if mu:
            buf = state.get("momentum_buffer")
            buf = g.clone() if buf is None else buf * mu + (1 - group["dampening"]) * g
            state["momentum_buffer"] = buf
            g = g + mu * buf if group["nesterov"] else buf
        p[...] = p - group["lr"] * g
