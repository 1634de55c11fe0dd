"""Adafactor (PyTorch's variant: factored second moments for matrices, relative step
size, update clipping by RMS)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

import numpy as _np

from .._C import Tensor
from .optimizer import Optimizer, _bump, _step_tensor, _ts


def _rms(x: Tensor) -> float:
    t = _ts()
    return float(t.sqrt(t.sum(x * x)).item()) / (x.size ** 0.5)


class Adafactor(Optimizer):
    """beta2_t = 1 - t^beta2_decay; for matrices (and batches of them) the second moment is
    the outer product of row and column mean-square EMAs over the last two axes (divided
    by the row mean), for vectors a full EMA; update = g / sqrt(max(v, eps1^2)), scaled
    down so its RMS is at most d, and applied with step max(eps2, RMS(p)) * min(lr, 1/sqrt(t)).
    weight_decay is decoupled (p *= 1 - lr wd). eps = (eps1 or the dtype's eps, eps2).
    State: step (0-d float32), row_var and col_var (ndim >= 2) or variance."""

    def __init__(self, params: Any, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: Tuple[Optional[float], float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: Optional[bool] = None,
                 maximize: bool = False) -> None:
        checks = [(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}"),
                  (beta2_decay <= 0.0, f"beta2_decay should be <= 0 but is: {beta2_decay}"),
                  (eps[0] is None or eps[0] >= 0.0, f"epsilon1 should be >= 0 but is: {eps[0]}"),
                  (eps[1] >= 0.0, f"epsilon2 should be >= 0 but is: {eps[1]}"),
                  (d >= 1.0, f"Clipping threshold d should be >= 1 but is: {d}"),
                  (weight_decay >= 0.0, f"weight_decay should be >= 0 but is: {weight_decay}")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"Adafactor: {msg}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=tuple(eps), d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    _tensor_step = True

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        if not state:
            state["step"] = _step_tensor()
            if grad.ndim > 1:
                state["row_var"] = t.zeros(tuple(grad.shape[:-1]) + (1,), dtype=grad.dtype,
                                           device=grad.device)
                state["col_var"] = t.zeros(tuple(grad.shape[:-2]) + (1, grad.shape[-1]),
                                           dtype=grad.dtype, device=grad.device)
            else:
                state["variance"] = t.zeros_like(grad)
        g = -grad if group["maximize"] else grad
        lr, (eps1, eps2) = group["lr"], group["eps"]
        if eps1 is None:
            eps1 = float(_np.finfo(p.dtype.name).eps) if p.dtype.name != "bfloat16" else 2.0 ** -7
        step = _bump(state)
        beta = step ** group["beta2_decay"]  # 1 - beta2_t
        alpha = max(eps2, _rms(p)) * min(lr, 1 / (step ** 0.5))
        if group["weight_decay"]:
            p.mul_(1 - lr * group["weight_decay"])
        if g.ndim > 1:
            sq = g * g
            row, col = state["row_var"], state["col_var"]
            row.add_((t.sum(sq, axis=-1, keepdims=True) / g.shape[-1] - row) * beta)
            col.add_((t.sum(sq, axis=-2, keepdims=True) / g.shape[-2] - col) * beta)
            var = (row @ col) / t.maximum(t.mean(row, axis=-2, keepdims=True), eps1)
        else:
            v = state["variance"]
            v.add_((g * g - v) * beta)
            var = v
        update = g / t.sqrt(t.maximum(var, eps1 * eps1))
        denom = max(1.0, _rms(update) / group["d"])
        p.sub_((alpha / denom) * update)
