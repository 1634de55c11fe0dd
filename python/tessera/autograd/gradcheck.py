"""torch.autograd.gradcheck / gradgradcheck signatures over tessera.testing's checkers."""
from __future__ import annotations

import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional

from .._C import Tensor
from .. import testing as _testing
from ..testing import GradcheckError

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_Inputs = _t.Union[Tensor, _t.Sequence[_t.Any]]


def _warn_low_precision(inputs: _Inputs) -> tuple:
    """Like torch, a non-double input that requires grad warns; unlike torch the check then
    runs on float64 copies (finite differences in single precision are mostly noise)."""
    ins = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    out = []
    for i, x in enumerate(ins):
        if isinstance(x, Tensor) and x.requires_grad and x.dtype.name not in ("float64", "complex128"):
            _warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          f"point or complex. This check will likely fail if all the inputs are "
                          f"not of double precision floating point or complex.", stacklevel=3)
            wide = "complex128" if x.dtype.name.startswith("complex") else "float64"
            x = x.detach().astype(wide).requires_grad_(True)
        out.append(x)
    return tuple(out)


def gradcheck(func: Callable, inputs: _Inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: Optional[bool] = None) -> bool:
    """Checks func's analytical gradients (backward) against central finite differences for
    every input that requires grad; True on success. On a mismatch raises GradcheckError (a
    RuntimeError) or returns False when raise_exception=False. Takes torch's keywords; the
    ones about forward AD, batching and undefined grads do not change what is checked."""
    if check_forward_ad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: tessera has no forward-mode AD; pass "
                                  "check_forward_ad=False, check_batched_forward_grad=False")
    if not check_backward_ad:
        return True
    widened = _warn_low_precision(inputs)
    return _testing.gradcheck(func, widened, eps=eps,
                              atol=atol + nondet_tol, rtol=rtol, raise_exception=raise_exception)


def gradgradcheck(func: Callable, inputs: _Inputs, grad_outputs: Any = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of the first derivative (a second-order check via create_graph=True)."""
    if check_fwd_over_rev:
        raise NotImplementedError("gradgradcheck: tessera has no forward-mode AD; pass "
                                  "check_fwd_over_rev=False")
    if not check_rev_over_rev:
        return True
    widened = _warn_low_precision(inputs)
    return _testing.gradgradcheck(func, widened, grad_outputs,
                                  eps=eps, atol=atol + nondet_tol, rtol=rtol,
                                  raise_exception=raise_exception)
