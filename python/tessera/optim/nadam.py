"""NAdam and RAdam (PyTorch's updates, with decoupled_weight_decay)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

from .._C import Tensor
from .optimizer import Optimizer, _begin_step, _check_nonneg, _flags, _ts


def _check_adam_like(name: str, lr: float, betas: Tuple[float, float], eps: float,
                     weight_decay: float) -> None:
    _check_nonneg(name, learning_rate=lr, epsilon_value=eps, weight_decay_value=weight_decay)
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"{name}: Invalid beta parameter at index {i}: {b}")


def _moments(p: Tensor, grad: Tensor, group: Dict[str, Any], state: Dict[str, Any]) -> Tensor:
    """The shared front of NAdam and RAdam: maximize, weight decay (L2 into g, or
    decoupled: p *= 1 - lr wd) and the two moment updates; returns the gradient used."""
    g = -grad if group["maximize"] else grad
    wd = group["weight_decay"]
    if wd:
        if group["decoupled_weight_decay"]:
            p.mul_(1 - group["lr"] * wd)
        else:
            g = g + wd * p
    b1, b2 = group["betas"]
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.add_((g - m) * (1 - b1))
    v.mul_(b2).add_((1 - b2) * (g * g))
    return g


class NAdam(Optimizer):
    """Adam with Nesterov momentum and the momentum-decay schedule
    mu_t = b1 (1 - 0.5 * 0.96^(t psi)). State: step, mu_product (0-d float32, as in
    PyTorch), exp_avg, exp_avg_sq."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 2e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_like("NAdam", lr, betas, eps, weight_decay)
        _check_nonneg("NAdam", momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize,
                                      **_flags("NAdam", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        step = _begin_step(p, state, "exp_avg", "exp_avg_sq")
        if "mu_product" not in state:
            state["mu_product"] = t.ones((), dtype=t.float32, device="cpu")
        b1, b2 = group["betas"]
        lr, psi = group["lr"], group["momentum_decay"]
        g = _moments(p, grad, group, state)
        mu = b1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
        mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
        prod = state["mu_product"]
        prod *= mu
        mu_prod = float(prod.item())
        denom = t.sqrt(state["exp_avg_sq"] / (1 - b2 ** step)) + group["eps"]
        p.add_((-lr * (1.0 - mu) / (1.0 - mu_prod)) * (g / denom))
        p.add_((-lr * mu_next / (1.0 - mu_prod * mu_next)) * (state["exp_avg"] / denom))


class RAdam(Optimizer):
    """Rectified Adam: the Adam step scaled by the variance rectification term once the
    SMA length rho_t exceeds 5, plain bias-corrected momentum SGD before. State: step,
    exp_avg, exp_avg_sq."""

    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam_like("RAdam", lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize,
                                      **_flags("RAdam", differentiable, foreach=foreach,
                                               capturable=capturable)))

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        step = _begin_step(p, state, "exp_avg", "exp_avg_sq")
        b1, b2 = group["betas"]
        lr = group["lr"]
        _moments(p, grad, group, state)
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        m_hat = state["exp_avg"] / bc1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = (bc2 ** 0.5) / (t.sqrt(state["exp_avg_sq"]) + group["eps"])
            p.sub_(m_hat * lr * adaptive * rect)
        else:
            p.sub_(m_hat * lr)
