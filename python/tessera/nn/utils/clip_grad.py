"""Gradient clipping (PyTorch's semantics)."""
from __future__ import annotations

import math
from typing import Any, Iterable, Union

from ..._C import Tensor


def _ts() -> Any:
    import tessera
    return tessera


def _params(parameters: Union[Tensor, Iterable[Tensor]]) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scales all gradients in place so their joint norm is at most max_norm; returns the
    total norm before clipping (float32 0-d tensor, like PyTorch for float32 grads)."""
    t = _ts()
    grads = [p.grad for p in _params(parameters) if p.grad is not None]
    if not grads:
        return t.asarray(0.0)
    norm_type = float(norm_type)
    with t.no_grad():
        if math.isinf(norm_type):
            norms = [t.max(t.abs(g)) for g in grads]
            total = t.max(t.stack([n.astype(t.float32) for n in norms]))
        else:
            norms = [t.sum(t.abs(g) ** norm_type) ** (1.0 / norm_type) for g in grads]
            total = t.sum(t.stack([n.astype(t.float32) for n in norms]) ** norm_type) ** (1.0 / norm_type)
        if error_if_nonfinite and not bool(t.isfinite(total)):
            raise RuntimeError(f"clip_grad_norm_: the total norm of order {norm_type} for "
                               "gradients is non-finite, so it cannot be clipped")
        coef = t.minimum(max_norm / (total + 1e-6), 1.0)
        for p in _params(parameters):
            if p.grad is not None:
                g = p.grad
                g[...] = g * coef.astype(g.dtype)
                p.grad = g
    return total


def clip_grad_value_(parameters: Union[Tensor, Iterable[Tensor]], clip_value: float,
                     foreach: Any = None) -> None:
    """Clamps every gradient element into [-clip_value, clip_value] in place."""
    t = _ts()
    with t.no_grad():
        for p in _params(parameters):
            if p.grad is not None:
                g = p.grad
                g[...] = t.clip(g, -clip_value, clip_value)
                p.grad = g
