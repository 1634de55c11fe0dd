"""Rprop, resilient backpropagation (PyTorch's update)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _check_nonneg, _flags, _ts


class Rprop(Optimizer):
    """Per element: the step size grows by etaplus where g and the previous g agree in sign,
    shrinks by etaminus where they disagree (and that g is then treated as 0), clamped to
    step_sizes; p -= sign(g) * step_size. State: step, prev, step_size."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-2, etas: Tuple[float, float] = (0.5, 1.2),
                 step_sizes: Tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_nonneg("Rprop", learning_rate=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize,
                                      **_flags("Rprop", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        _begin_step(p, state, "prev")
        if "step_size" not in state:
            state["step_size"] = t.full(tuple(p.shape), group["lr"], dtype=grad.dtype,
                                        device=grad.device)
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        g = -grad if group["maximize"] else grad
        s = t.sign(g * state["prev"])
        factor = t.where(s > 0, etaplus, t.where(s < 0, etaminus, 1.0)).astype(g.dtype)
        size = state["step_size"] = t.clip(state["step_size"] * factor, lo, hi)
        g = t.where(factor == etaminus, 0.0, g).astype(g.dtype)
        p.sub_(t.sign(g) * size)
        state["prev"] = g
