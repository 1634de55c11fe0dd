"""tessera.special: torch.special's functions (scipy.special names).

The elementwise special functions are C++ ops (csrc/ops/special.h; their scalar math, shared by
the CPU and CUDA kernels, in csrc/cpu/special_math.h, Note [Special function algorithms];
their gradients in csrc/autograd/formulas_special.cpp): error functions (erf, erfc, erfcx,
erfinv, ndtr, ndtri, log_ndtr), the gamma family (gammaln, digamma/psi, polygamma,
multigammaln, zeta), modified Bessel functions (i0, i0e, i1, i1e), entr, xlogy, xlog1py,
logit, sinc, gammainc/gammaincc and the orthogonal polynomials (Chebyshev, Hermite,
Laguerre, Legendre; Note [polynomials of large degree]). This module names them (the same
objects as ts.lgamma, ts.erfinv, ...).

Integer and bool inputs compute in the default float dtype (set_default_dtype), as torch's.
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any

from ._C import Tensor
from ._C import (  # noqa: F401  (the C++ ops, re-exported)
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, digamma, entr, erf, erfc, erfcx, erfinv, gammainc, gammaincc,
    hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e, laguerre_polynomial_l,
    legendre_polynomial_p, lgamma, log_ndtr, logit, modified_bessel_i0, modified_bessel_i1,
    mvlgamma, ndtr, ndtri, polygamma, sinc, xlog1py, xlogy, zeta,
)

__all__ = ["erf", "erfc", "erfcx", "erfinv", "ndtr", "ndtri", "log_ndtr", "expit", "logit",
           "exp2", "expm1", "log1p", "gammaln", "digamma", "psi", "polygamma", "multigammaln",
           "i0", "i0e", "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "entr",
           "xlogy", "xlog1py", "sinc", "round", "softmax", "log_softmax", "logsumexp",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "gammainc", "gammaincc", "zeta"]

gammaln = lgamma
psi = digamma
multigammaln = mvlgamma


def _ts() -> Any:
    import tessera
    return tessera


def _float(x: Any) -> Tensor:
    """x as a floating tensor (ints and bools in the default float dtype)."""
    ts = _ts()
    if not isinstance(x, Tensor):
        x = ts.asarray(x)
    if not ts.isdtype(x.dtype, ("real floating", "complex floating")):
        x = x.astype(ts.get_default_dtype())
    return x


def expit(input: Tensor) -> Tensor:
    """1 / (1 + exp(-input)) (torch.special.expit; integers give the default float dtype)."""
    return _ts().sigmoid(_float(input))


def exp2(input: Tensor) -> Tensor:
    """2 ** input (float result)."""
    return _ts().exp2(_float(input))


def expm1(input: Tensor) -> Tensor:
    """exp(input) - 1, accurate for small input (float result)."""
    return _ts().expm1(_float(input))


def log1p(input: Tensor) -> Tensor:
    """log(1 + input), accurate for small input (float result)."""
    return _ts().log1p(_float(input))


def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return _ts().round(input, decimals=decimals)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _ts().softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _ts().log_softmax(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return _ts().logsumexp(input, dim, keepdim)
