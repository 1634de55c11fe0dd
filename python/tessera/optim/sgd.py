"""SGD with momentum, dampening, Nesterov, weight decay, maximize (PyTorch's update), one
fused C++ pass per param group (``_C._sgd_step_``)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

from .. import _C
from .optimizer import Optimizer, _flags, _real, _ts


class SGD(Optimizer):
    """g = -g if maximize; g += wd p; buf = g (first step) or mu buf + (1 - dampening) g;
    g = g + mu buf (nesterov) or buf; p -= lr g. foreach/fused are accepted and select
    nothing (see ``_flags``)."""

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: Optional[bool] = None, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        if not 0.0 <= lr:  # NaN too (PyTorch lets it through: every parameter NaN)
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize,
                                      **_flags("SGD", differentiable, foreach=foreach,
                                               fused=fused)))

    def _step_group(self, group: Dict[str, Any]) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        # complex parameters and their (complex) buffers step as pairs of reals
        grads = [_real(p.grad) for p in params]
        mu = group["momentum"]
        bufs = [_real(self.state[p].get("momentum_buffer")) for p in params] if mu else []
        new = _C._sgd_step_([_real(p) for p in params], grads, bufs, group["lr"], mu,
                            group["dampening"], group["weight_decay"], group["nesterov"],
                            group["maximize"])
        if mu and any(b is None for b in bufs):
            for p, b in zip(params, new):
                self.state[p]["momentum_buffer"] = _ts().view_as_complex(b) if p.is_complex() else b
