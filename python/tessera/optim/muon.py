"""Muon: momentum SGD whose update is orthogonalized by a Newton-Schulz iteration
(PyTorch's ``torch.optim.Muon``, 2-D parameters only)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Tuple

from .._C import Tensor
from .optimizer import Optimizer, _ts

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16_addmm(c: Tensor, a: Tensor, b: Tensor, beta: float, alpha: float) -> Tensor:
    """beta c + alpha (a @ b) on bfloat16 operands, accumulated in float32 and rounded
    once, as PyTorch's CPU bfloat16 addmm does."""
    t = _ts()
    f32 = t.float32
    return (beta * c.astype(f32) + alpha * (a.astype(f32) @ b.astype(f32))).astype(t.bfloat16)


def zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: Tuple[float, float, float],
                               ns_steps: int, eps: float) -> Tensor:
    """An approximately orthogonal matrix with grad's singular vectors (U V^T), by the
    quintic Newton-Schulz iteration X <- a X + (b G + c G^2) X, G = X X^T, in bfloat16
    (on the wide orientation) after scaling X to unit Frobenius norm."""
    t = _ts()
    if ns_steps >= 100:
        raise ValueError("Muon: number of steps must be less than 100 for computational "
                         "efficiency")
    if grad.ndim != 2:
        raise ValueError(f"Muon: input tensor gradient must be a 2D matrix, got shape "
                         f"{tuple(grad.shape)}")
    if len(ns_coefficients) != 3:
        raise ValueError("Muon: coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.astype(t.bfloat16)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.mT
    xf = x.astype(t.float32)
    norm = t.sqrt(t.sum(xf * xf)).astype(t.bfloat16).astype(t.float32)
    x = (xf / t.maximum(norm, eps)).astype(t.bfloat16)
    for _ in range(ns_steps):
        gram = (x.astype(t.float32) @ x.mT.astype(t.float32)).astype(t.bfloat16)
        update = _bf16_addmm(gram, gram, gram, b, c)
        x = _bf16_addmm(x, update, x, a, 1.0)
    return x.mT if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: Optional[str], shape: Tuple[int, ...]) -> float:
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * _math.sqrt(max(1, A / B))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * _math.sqrt(max(A, B))
    return lr


class Muon(Optimizer):
    """buf = lerp(buf, g, 1 - momentum); u = lerp(g, buf, momentum) (nesterov) or buf;
    p *= 1 - lr wd; p -= lr' NS(u) with lr' = lr sqrt(max(1, rows/cols)) ('original') or
    0.2 lr sqrt(max(rows, cols)) ('match_rms_adamw'). State: momentum_buffer."""

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: Tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: Optional[str] = None) -> None:
        for ok, msg in [(lr >= 0.0, f"Learning rate should be >= 0 but is: {lr}"),
                        (momentum >= 0.0, f"momentum should be >= 0 but is: {momentum}"),
                        (weight_decay >= 0.0,
                         f"weight decay should be >= 0 but is: {weight_decay}"),
                        (adjust_lr_fn in (None, "original", "match_rms_adamw"),
                         f"Adjust learning rate function {adjust_lr_fn} is not supported")]:
            if not ok:
                raise ValueError(f"Muon: {msg}")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for g in self.param_groups:
            for p in g["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {tuple(p.shape)}")

    def _update(self, p: Tensor, grad: Tensor, group: Dict[str, Any],
                state: Dict[str, Any]) -> None:
        t = _ts()
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = t.zeros_like(grad)
        mu, lr = group["momentum"], group["lr"]
        buf = state["momentum_buffer"]
        buf.add_((grad - buf) * (1 - mu))
        u = (buf - (buf - grad) * (1 - mu)) if group["nesterov"] else buf
        u = zeropower_via_newtonschulz(u, group["ns_coefficients"], group["ns_steps"],
                                       group["eps"])
        step = _adjust_lr(lr, group["adjust_lr_fn"], tuple(p.shape))
        p.mul_(1 - lr * group["weight_decay"])
        p.sub_(step * u.astype(p.dtype))
