"""Gradient clipping (PyTorch's semantics)."""
from __future__ import annotations

import math as _math
import types as _types
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Iterable, Union

from ... import _C
from ..._C import Tensor

_REAL_FLOATS = (_C.float16, _C.bfloat16, _C.float32, _C.float64)


def _ts() -> Any:
    import tessera
    return tessera


def _params(parameters: Union[Tensor, Iterable[Tensor]]) -> list:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _vector_norm(x: Tensor, p: float) -> Tensor:
    """torch.linalg.vector_norm(x, p) over all elements, in x's dtype: p=0 counts the
    nonzeros, +-inf is the max/min magnitude, other p is (sum |x|^p)^(1/p)."""
    t = _ts()
    if p == 2 and x.dtype in _REAL_FLOATS and 0 < x.numel() < 2**31:
        # One pass over the gradient (a BLAS/cuBLAS dot) instead of abs, pow and sum kernels.
        v = x.reshape(-1)
        return t.sqrt(_C.matmul(v, v))
    if p == 0:
        return t.sum(t.not_equal(x, 0)).astype(x.dtype)
    if _math.isinf(p):
        return t.max(t.abs(x)) if p > 0 else t.min(t.abs(x))
    return t.sum(t.abs(x) ** p) ** (1.0 / p)


def _norms(grads: list, p: float) -> Tensor:
    """The p-norm of each gradient, stacked (1-D). The 2-norm of same-dtype float32/float64
    gradients on one device is one sum-of-squares reduction each (`_C._foreach_norm`, as
    torch._foreach_norm); other cases one `_vector_norm` each."""
    d, dev = grads[0].dtype, grads[0].device
    if p == 2 and d in (_C.float32, _C.float64) and all(
            g.dtype == d and g.device == dev for g in grads):
        return _C._foreach_norm(grads)
    return _ts().stack([_vector_norm(g, p) for g in grads])


def clip_grad_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scales all gradients in place by min(max_norm / (total + 1e-6), 1); returns the total
    norm before clipping: the p-norm of the per-gradient p-norms, in their promoted dtype
    (torch's definition, so p=0 counts the gradients that have a nonzero). `foreach` is
    accepted for compatibility: both of torch's paths compute the same values."""
    t = _ts()
    is_generator = isinstance(parameters, _types.GeneratorType)
    # Listed once: a generator (model.parameters()) would be exhausted before the clipping.
    params = _params(parameters)
    if is_generator and not params:
        _warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                      stacklevel=2)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return t.asarray(0.0)
    norm_type = float(norm_type)
    with t.no_grad():
        total = _vector_norm(_norms(grads, norm_type), norm_type)
        if error_if_nonfinite and not bool(t.isfinite(total)):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               "`parameters` is non-finite, so it cannot be clipped. To "
                               "disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`")
        coef = t.minimum(float(max_norm) / (total + 1e-6), 1.0)
        casts = {coef.dtype: coef}
        for p in params:
            if p.grad is not None:
                d = p.grad.dtype
                if d not in casts:
                    casts[d] = coef.astype(d)
                p.grad.mul_(casts[d])
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


def get_total_norm(tensors: Union[Tensor, Iterable[Tensor]], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """The norm of the norms of `tensors` (as if concatenated)."""
    ts = _ts()
    ts_list = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    if not ts_list:
        return ts.asarray(0.0)
    norm_type = float(norm_type)
    with ts.no_grad():
        total = _vector_norm(_norms(ts_list, norm_type), norm_type)
    if error_if_nonfinite and not bool(ts.isfinite(total)):
        raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable this "
                           "error and scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters: Union[Tensor, Iterable[Tensor]], max_norm: float,
                          total_norm: Tensor, foreach: Any = None) -> None:
    """Scales every .grad by min(1, max_norm / (total_norm + 1e-6)) in place."""
    ts = _ts()
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    coef = ts.clip(max_norm / (total_norm + 1e-6), max=1.0)
    with ts.no_grad():
        for p in params:
            if p.grad is not None:
                g = p.grad
                g[...] = g * coef.astype(g.dtype)


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Deprecated alias of clip_grad_norm_."""
    import warnings
    _warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
