"""Adam and AdamW (PyTorch's updates, including amsgrad and maximize), one fused C++ pass per
param group (``_C._adam_step_``)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

from .. import _C
from .._C import Tensor
from .optimizer import Optimizer, _flags, _real


def _ts() -> Any:
    import tessera
    return tessera


def _check(lr: float, betas: Tuple[float, float], eps: float, weight_decay: float) -> None:
    if not 0.0 <= lr:  # NaN too, as PyTorch
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, b in enumerate(betas[:2]):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")  # torch's wording
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """m = lerp(m, g, 1-b1); v = b2 v + (1-b2) g^2 (amsgrad: v_max = max(v_max, v));
    p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps). Weight decay is L2 (added to g).
    State per parameter, as PyTorch keeps it: step (0-d float32), exp_avg, exp_avg_sq
    (and max_exp_avg_sq with amsgrad). ``decoupled_weight_decay=True`` is AdamW's update;
    foreach/capturable/fused are accepted and select nothing (see ``_flags``)."""

    _decoupled = False
    _tensor_step = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        _check(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay
                                      or self._decoupled,
                                      **_flags(type(self).__name__, differentiable,
                                               foreach=foreach, capturable=capturable,
                                               fused=fused)))

    def _init_state(self, p: Tensor, amsgrad: bool, capturable: bool = False) -> Dict[str, Any]:
        t = _ts()
        state = self.state[p]
        if not state:
            # capturable: the count lives on the parameter's device, read and bumped by the
            # kernel, so a CUDA graph of the step replays the right bias corrections.
            state["step"] = t.zeros((), dtype=t.float32,
                                    device=p.device if capturable and p.is_cuda else "cpu")
            state["exp_avg"] = t.zeros_like(p)
            state["exp_avg_sq"] = t.zeros_like(p)
        if amsgrad and "max_exp_avg_sq" not in state:
            state["max_exp_avg_sq"] = t.zeros_like(p)
        return state

    def _step_group(self, group: Dict[str, Any]) -> None:
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        amsgrad = group["amsgrad"]
        capturable = bool(group.get("capturable", False))
        if not capturable and params[0].is_cuda:
            from ..cuda import is_current_stream_capturing
            if is_current_stream_capturing():
                raise RuntimeError(f"{type(self).__name__}.step: CUDA graph capture of a step "
                                   "with capturable=False (the step counts live on the host "
                                   "and the captured bias corrections would never change). "
                                   "hint: construct the optimizer with capturable=True")
        states = [self._init_state(p, amsgrad, capturable) for p in params]
        m: List[Tensor] = [s["exp_avg"] for s in states]
        v: List[Tensor] = [s["exp_avg_sq"] for s in states]
        vmax: List[Tensor] = [s["max_exp_avg_sq"] for s in states] if amsgrad else []
        steps: List[Tensor] = [s["step"] for s in states]
        b1, b2 = group["betas"]
        # complex parameters and their (complex) state step as pairs of reals
        params, grads = [_real(p) for p in params], [_real(p.grad) for p in params]
        m, v, vmax = [_real(x) for x in m], [_real(x) for x in v], [_real(x) for x in vmax]
        _C._adam_step_(params, grads, m, v, vmax, steps, group["lr"], b1, b2,
                       group["eps"], group["weight_decay"], amsgrad, group["maximize"],
                       group.get("decoupled_weight_decay", self._decoupled))


class AdamW(Adam):
    """Adam with decoupled weight decay: p *= 1 - lr * weight_decay before the Adam step."""

    _decoupled = True

    def __init__(self, params: Any, lr: float = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused)
