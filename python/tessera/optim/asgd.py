"""ASGD, averaged SGD (PyTorch's update and its float32 eta/mu state)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

import numpy as _np

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _check_nonneg, _flags, _ts


class ASGD(Optimizer):
    """p = p (1 - lambd eta) - eta g; ax = p while mu == 1, else ax += mu (p - ax);
    eta = lr / (1 + lambd lr t)^alpha, mu = 1 / max(1, t - t0). State: step, eta, mu
    (0-d float32 tensors, like PyTorch's) and ax (the average)."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach: Optional[bool] = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_nonneg("ASGD", learning_rate=lr, weight_decay_value=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize,
                                      **_flags("ASGD", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        lr, lambd = group["lr"], group["lambd"]
        step = _begin_step(p, state, "ax")
        if "eta" not in state:
            state["eta"] = t.asarray(lr, dtype=t.float32, device="cpu")
            state["mu"] = t.ones((), dtype=t.float32, device="cpu")
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        eta = float(state["eta"].item())
        p.mul_(1 - lambd * eta).sub_(eta * g)
        ax, mu = state["ax"], float(state["mu"].item())
        if mu != 1:
            ax.add_((p - ax) * mu)
        else:
            ax[...] = p
        # eta and mu are float32 in PyTorch's state: round like its copy_ does.
        state["eta"][...] = float(_np.float32(lr / ((1 + lambd * lr * step) ** group["alpha"])))
        state["mu"][...] = float(_np.float32(1 / max(1, step - group["t0"])))
