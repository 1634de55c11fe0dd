"""RMSprop and Adagrad (PyTorch's updates)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _bump, _flags, _step_tensor, _ts


class RMSprop(Optimizer):
    """v = alpha v + (1-alpha) g^2 (centered: minus the squared running mean of g);
    p -= lr * g / (sqrt(v) + eps), through a momentum buffer when momentum > 0.
    State: step (0-d float32), square_avg (+ momentum_buffer, grad_avg)."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach: Optional[bool] = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        for name, v in (("learning rate", lr), ("epsilon value", eps), ("momentum value", momentum),
                        ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if not 0.0 <= v:  # NaN too, as PyTorch
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize,
                                      **_flags("RMSprop", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> None:
        t = _ts()
        g = -grad if group["maximize"] else grad
        fresh = not state
        _begin_step(p, state, "square_avg")
        if fresh and group["momentum"] > 0:
            state["momentum_buffer"] = t.zeros_like(p)
        if fresh and group["centered"]:
            state["grad_avg"] = t.zeros_like(p)
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        alpha = group["alpha"]
        sq = state["square_avg"] * alpha + (1 - alpha) * g * g
        state["square_avg"] = sq
        if group["centered"]:
            ga = state["grad_avg"] + (g - state["grad_avg"]) * (1 - alpha)
            state["grad_avg"] = ga
            avg = t.sqrt(sq - ga * ga) + group["eps"]
        else:
            avg = t.sqrt(sq) + group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"] * group["momentum"] + g / avg
            state["momentum_buffer"] = buf
            p.sub_(group["lr"] * buf)
        else:
            p.sub_(group["lr"] * (g / avg))


class Adagrad(Optimizer):
    """s += g^2; p -= lr / (1 + (t-1) lr_decay) * g / (sqrt(s) + eps). State: step (0-d
    float32), sum (starting at initial_accumulator_value)."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach: Optional[bool] = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        for name, v in (("learning rate", lr), ("lr_decay value", lr_decay),
                        ("weight_decay value", weight_decay), ("epsilon value", eps),
                        ("initial_accumulator_value", initial_accumulator_value)):
            if not 0.0 <= v:  # NaN too, as PyTorch
                raise ValueError(f"Invalid {name}: {v}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize,
                                      **_flags("Adagrad", differentiable, foreach=foreach,
                                               fused=fused)))
        # PyTorch creates Adagrad's state at construction (visible in state_dict at once).
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p: Tensor, group: Dict[str, Any]) -> Dict[str, Any]:
        state = self.state[p]
        if not state:
            state["step"] = _step_tensor()
            state["sum"] = _ts().full(tuple(p.shape), group["initial_accumulator_value"],
                                      dtype=p.dtype, device=p.device)
        return state

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> None:
        t = _ts()
        g = -grad if group["maximize"] else grad
        self._init_state(p, group)
        step = _bump(state)
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"] + g * g
        state["sum"] = s
        p.sub_(clr * (g / (t.sqrt(s) + group["eps"])))
