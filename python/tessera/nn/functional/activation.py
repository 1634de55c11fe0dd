"""Activation functions, softmax family, erf/GELU — built from differentiable tessera ops.

Branch-free forms are chosen so that no unselected branch can overflow: an inf in the
branch that `where` discards would turn its zero gradient into NaN (0 * inf)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Union

from ... import _C
from ..._C import Tensor
from ...amp import _policy as _amp
from ...autograd.function import Function, FunctionCtx

Dim = Optional[Union[int, Sequence[int]]]


def _ts() -> Any:
    import tessera
    return tessera


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) (NaN stays NaN); the gradient is g where the output is positive (the C++ op
    csrc/ops/nn/activation.h)."""
    return _C.relu(x)


def relu6(x: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(x, 0.0, 6.0)


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; as torch's hardtanh_backward, the gradient passes only
    where min_val < x < max_val (and where x is NaN): 0 at the bounds themselves."""
    t = _ts()
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    # strict comparisons route the tie to the constant branch (no gradient); NaN stays NaN
    # and keeps its gradient, like torch
    return t.where(x <= min_val, min_val, t.where(x >= max_val, max_val, x))


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _ts().where(x > 0, x, x * negative_slope)


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    t = _ts()
    # torch's elu_backward tests x <= 0: x == 0 takes the negative branch's full derivative
    # alpha (minimum(x, 0) gave half of it), NaN the identity's; x > 0 is kept out of expm1
    # so it cannot overflow
    return t.where(x <= 0, alpha * t.expm1(t.where(x <= 0, x, 0)), x)


def celu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    t = _ts()
    return t.where(x <= 0, alpha * t.expm1(t.where(x <= 0, x, 0) / alpha), x)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Tensor, inplace: bool = False) -> Tensor:
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), evaluated with exp(-|x|) so nothing overflows."""
    t = _ts()
    # -|x| as a where on the same test as below (abs has gradient 0 at 0, which made
    # sigmoid'(0) 0 instead of 0.25)
    e = t.exp(t.where(input >= 0, -input, input))
    return t.where(input >= 0, 1 / (1 + e), e / (1 + e))


def logsigmoid(input: Tensor) -> Tensor:
    t = _ts()
    # min(x, 0) - log1p(exp(-|x|)) with the kinks at 0 written as wheres, so the second
    # derivative at 0 is torch's -1/4 (minimum / abs have none there)
    return t.where(input >= 0, 0, input) - t.log1p(t.exp(t.where(input >= 0, -input, input)))


def tanh(input: Tensor) -> Tensor:
    return _ts().tanh(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, linear above `threshold` (PyTorch's rule)."""
    input = _amp.cast(_amp.FP32_CUDA, input)
    t = _ts()
    bx = input * beta
    # where (not minimum): at beta*x == threshold torch takes the soft branch's full
    # derivative sigmoid(beta*x)
    soft = t.log1p(t.exp(t.where(bx > threshold, threshold, bx))) / beta
    return t.where(bx > threshold, input, soft)


def silu(x: Tensor, inplace: bool = False) -> Tensor:
    return x * sigmoid(x)


def mish(x: Tensor, inplace: bool = False) -> Tensor:
    return x * _ts().tanh(softplus(x))


class _Hardsigmoid(Function):
    """Value clamp(x/6 + 1/2, 0, 1); gradient torch's hardsigmoid_backward: 1/6 where
    -3 < x < 3, else 0 (NaN included)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return hardtanh(x / 6 + 0.5, 0.0, 1.0)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return _ts().where((x > -3) & (x < 3), g / 6, 0)


class _Hardswish(Function):
    """Value x * clamp(x + 3, 0, 6) / 6; gradient torch's hardswish_backward: 0 for x <= -3,
    x/3 + 1/2 for -3 < x < 3, 1 for x >= 3 (NaN and +inf included)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return x * hardtanh(x + 3, 0.0, 6.0) / 6

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        t = _ts()
        return t.where(x <= -3, 0, t.where(x < 3, g * (x / 3 + 0.5), g))


def _float_input(x: Tensor) -> bool:
    return isinstance(x, Tensor) and _ts().isdtype(x.dtype, "real floating")


def hardsigmoid(x: Tensor, inplace: bool = False) -> Tensor:
    if not _float_input(x):
        return hardtanh(x / 6 + 0.5, 0.0, 1.0)
    return _Hardsigmoid.apply(x)


def hardswish(x: Tensor, inplace: bool = False) -> Tensor:
    if not _float_input(x):
        return x * hardtanh(x + 3, 0.0, 6.0) / 6
    return _Hardswish.apply(x)


def softsign(input: Tensor) -> Tensor:
    return input / (1 + _ts().abs(input))


def tanhshrink(input: Tensor) -> Tensor:
    return input - _ts().tanh(input)


# Note [erfc by a Chebyshev-fitted exponent]
# tessera has no erf kernel yet. erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2), z = |x|,
# with the 9th-degree P of Numerical Recipes' erfcc has RELATIVE error < 1.2e-7 for all
# z >= 0; erfc(-z) = 2 - erfc(z). GELU is written through erfc so its error stays relative
# in both tails (about 1e-8 absolute). Backward uses the exact derivative
# d/dx erfc(x) = -2/sqrt(pi) exp(-x^2) (erfc is an autograd Function), not the derivative of
# the fit (which was also 0 at x = 0, through |x|).
_ERFC_C = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
           -1.13520398, 1.48851587, -0.82215223, 0.17087277)


def _erfc_fit(x: Tensor) -> Tensor:
    t = _ts()
    z = t.abs(x)
    u = 1 / (1 + 0.5 * z)
    p = _ERFC_C[-1]
    for c in reversed(_ERFC_C[:-1]):
        p = c + u * p
    y = u * t.exp(p - z * z)
    return t.where(x >= 0, y, 2 - y)


class _Erfc(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return _erfc_fit(x)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        return g * (_ts().exp(-(x * x)) * (-2 / math.sqrt(math.pi)))


def erfc(x: Tensor) -> Tensor:
    """The complementary error function (relative error < 1.2e-7; Note [erfc by a
    Chebyshev-fitted exponent]); its gradient is the exact -2/sqrt(pi) exp(-x^2)."""
    if isinstance(x, Tensor) and _ts().isdtype(x.dtype, "real floating"):
        return _Erfc.apply(x)
    return _erfc_fit(x)


def erf(x: Tensor) -> Tensor:
    """The error function, 1 - erfc(x) (absolute error < 1.2e-7)."""
    return 1 - erfc(x)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), any shape; `approximate="tanh"` uses PyTorch's tanh formula (the C++ op
    csrc/ops/nn/activation.h: one fused kernel, gradients of every order)."""
    return _C.gelu(input, approximate)


def _safe_max(x: Tensor, axis: Any) -> Tensor:
    """max over axis (keepdims), detached, with infinities replaced by 0 so that
    x - max stays finite for rows of all -inf."""
    t = _ts()
    m = t.max(x.detach(), axis=axis, keepdims=True)
    return t.where(t.isfinite(m), m, 0)


def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (PyTorch's implicit dim when None), any shape; the C++
    op csrc/ops/nn/softmax.h (one fused pass per row, gradients of every order)."""
    return _C.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """x - logsumexp(x) along `dim`, any shape (the C++ op csrc/ops/nn/softmax.h)."""
    return _C.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype=dtype)


def logsumexp(x: Tensor, dim: Dim = None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, shifted by the (detached) max for stability."""
    x = _amp.cast(_amp.FP32_CUDA, x)
    t = _ts()
    axis = tuple(range(x.ndim)) if dim is None else dim
    m = _safe_max(x, axis)
    out = t.log(t.sum(t.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        out = t.squeeze(out, axis=axis if isinstance(axis, tuple) else (axis,))
    return out


def glu(input: Tensor, dim: int = -1) -> Tensor:
    n = input.shape[dim]
    if n % 2:
        raise ValueError(f"glu: halving dimension {dim} of size {n} must be even")
    a, b = _halves(input, dim)
    return a * sigmoid(b)


def _halves(x: Tensor, dim: int) -> Any:
    dim = dim % x.ndim
    h = x.shape[dim] // 2
    idx_a = (slice(None),) * dim + (slice(0, h),)
    idx_b = (slice(None),) * dim + (slice(h, None),)
    return x[idx_a], x[idx_b]
