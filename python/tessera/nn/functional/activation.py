"""Activation functions (PyTorch's, with their `inplace=` and trailing-underscore forms),
the softmax family, erf/GELU — built from differentiable tessera ops and C++ ops.

The value of each activation with an in-place form is `_<name>_out`; the public function adds
`inplace=` on top (Note [In-place activations under autograd]).

Note [In-place activations under autograd]
``relu_(x)`` computes y = relu(clone(x)) and writes it back with ``x[...] = y``: the write
rebinds x's autograd history to y (or raises for a leaf that requires grad, as in PyTorch),
and the clone keeps the values y's backward saved from being overwritten by that write.
Without autograd the write is all there is (no graph, nothing saved).

Branch-free forms are chosen so that no unselected branch can overflow: an inf in the
branch that `where` discards would turn its zero gradient into NaN (0 * inf)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Union

from ... import _C
from ..._C import Tensor
from ...amp import _policy as _amp
from .. import _rng
from ...autograd.function import Function, FunctionCtx

Dim = Optional[Union[int, Sequence[int]]]


def _ts() -> Any:
    import tessera
    return tessera


def _relu_out(x: Tensor) -> Tensor:
    """max(x, 0) (NaN stays NaN); the gradient is g where the output is positive (the C++ op
    csrc/ops/nn/activation.h)."""
    return _C.relu(x)


def _relu6_out(x: Tensor) -> Tensor:
    return _hardtanh_out(x, 0.0, 6.0)


def _hardtanh_out(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """x clamped to [min_val, max_val]; as torch's hardtanh_backward, the gradient passes only
    where min_val < x < max_val (and where x is NaN): 0 at the bounds themselves."""
    t = _ts()
    if min_val > max_val:
        raise ValueError("hardtanh: min_val cannot be greater than max_val")
    # strict comparisons route the tie to the constant branch (no gradient); NaN stays NaN
    # and keeps its gradient, like torch
    return t.where(x <= min_val, min_val, t.where(x >= max_val, max_val, x))


def _leaky_relu_out(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    return _ts().where(x > 0, x, x * negative_slope)


def _elu_out(x: Tensor, alpha: float = 1.0) -> Tensor:
    t = _ts()
    # torch's elu_backward tests x <= 0: x == 0 takes the negative branch's full derivative
    # alpha (minimum(x, 0) gave half of it), NaN the identity's; x > 0 is kept out of expm1
    # so it cannot overflow
    return t.where(x <= 0, alpha * t.expm1(t.where(x <= 0, x, 0)), x)


def _celu_out(x: Tensor, alpha: float = 1.0) -> Tensor:
    t = _ts()
    return t.where(x <= 0, alpha * t.expm1(t.where(x <= 0, x, 0) / alpha), x)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu_out(x: Tensor) -> Tensor:
    return _SELU_SCALE * _elu_out(x, _SELU_ALPHA)


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
    input = _amp.cast("softplus", input)
    t = _ts()
    bx = input * beta
    # where (not minimum): at beta*x == threshold torch takes the soft branch's full
    # derivative sigmoid(beta*x)
    soft = t.log1p(t.exp(t.where(bx > threshold, threshold, bx))) / beta
    return t.where(bx > threshold, input, soft)


def _silu_out(x: Tensor) -> Tensor:
    return x * sigmoid(x)


def _mish_out(x: Tensor) -> Tensor:
    return x * _ts().tanh(softplus(x))


class _Hardsigmoid(Function):
    """Value clamp(x/6 + 1/2, 0, 1); gradient torch's hardsigmoid_backward: 1/6 where
    -3 < x < 3, else 0 (NaN included)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        return _hardtanh_out(x / 6 + 0.5, 0.0, 1.0)

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
        return x * _hardtanh_out(x + 3, 0.0, 6.0) / 6

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        t = _ts()
        return t.where(x <= -3, 0, t.where(x < 3, g * (x / 3 + 0.5), g))


def _float_input(x: Tensor) -> bool:
    return isinstance(x, Tensor) and _ts().isdtype(x.dtype, "real floating")


def _hardsigmoid_out(x: Tensor) -> Tensor:
    if not _float_input(x):
        return _hardtanh_out(x / 6 + 0.5, 0.0, 1.0)
    return _Hardsigmoid.apply(x)


def _hardswish_out(x: Tensor) -> Tensor:
    if not _float_input(x):
        return x * _hardtanh_out(x + 3, 0.0, 6.0) / 6
    return _Hardswish.apply(x)


def softsign(input: Tensor) -> Tensor:
    return input / (1 + _ts().abs(input))


def tanhshrink(input: Tensor) -> Tensor:
    return input - _ts().tanh(input)



erf, erfc = _C.erf, _C.erfc  # the C++ ops (csrc/ops/special.h)


gelu = _C.gelu  # the C++ op itself (csrc/python/bind_nn.cpp: signature, docstring, errors)


softmax = _C.softmax  # the C++ ops themselves (csrc/python/bind_nn.cpp)
log_softmax = _C.log_softmax


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    return softmax(-input, dim, dtype=dtype)


logsumexp = _C.logsumexp  # ts.logsumexp itself (csrc/ops/statistics.cpp)


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


# ------------------------------------------------------------------ PyTorch's public forms
def _write_back(x: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """x[...] = fn(x), autograd-safe (Note [In-place activations under autograd])."""
    t = _ts()
    if t.is_grad_enabled() and x.requires_grad:
        if x.is_leaf:
            raise RuntimeError("a leaf Tensor that requires grad is being used in an in-place "
                               "operation")
        x[...] = fn(x.clone())
    else:
        x[...] = fn(x)
    return x


def _maybe_inplace(x: Tensor, inplace: bool, fn: Callable[[Tensor], Tensor]) -> Tensor:
    return _write_back(x, fn) if inplace else fn(x)


# ------------------------------------------------------------------ inplace= on activation.py's
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0); with inplace=True x itself is overwritten and returned."""
    return _maybe_inplace(input, inplace, _relu_out)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _relu6_out)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _elu_out(v, alpha))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _celu_out(v, alpha))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _selu_out)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _leaky_relu_out(v, negative_slope))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _hardtanh_out(v, min_val, max_val))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _silu_out)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _mish_out)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _hardsigmoid_out)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _hardswish_out)


# ------------------------------------------------------------------ new activations
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    t = _ts()
    return _maybe_inplace(input, inplace, lambda v: t.where(v > threshold, v, value))


_threshold = threshold


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    t = _ts()
    return t.where((input > lambd) | (input < -lambd), input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    t = _ts()
    if lambd < 0:
        raise ValueError(f"softshrink: lambda must be non-negative, got {lambd}")
    return t.where(input > lambd, input - lambd, t.where(input < -lambd, input + lambd, 0.0))


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; weight has 1 element or one per channel (dim 1; an
    input of fewer than 2 dims has one channel)."""
    t = _ts()
    x = input
    n = weight.size
    if weight.ndim > 1:
        raise ValueError(f"prelu: weight must be 0-D or 1-D, got shape {tuple(weight.shape)}")
    if n != 1:
        channels = x.shape[1] if x.ndim >= 2 else 1
        if n != channels:
            raise ValueError(f"prelu: weight of {n} elements does not match the {channels} "
                             f"channels of input shape {tuple(x.shape)} (expected 1 or "
                             f"{channels})")
        if x.ndim >= 2:
            weight = t.reshape(weight, (n,) + (1,) * (x.ndim - 2))
    elif weight.ndim == 1 and x.ndim == 0:
        weight = t.reshape(weight, ())
    return t.where(x > 0, x, weight * x)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: negative inputs are scaled by a slope drawn U(lower, upper) per
    element in training, by (lower + upper) / 2 in eval."""
    t = _ts()
    if not 0 <= lower <= upper:
        raise ValueError(f"rrelu: expected 0 <= lower <= upper, got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _rng.uniform(lower, upper, tuple(input.shape), input.dtype).to(input.device)
    return _maybe_inplace(input, inplace, lambda v: t.where(v > 0, v, v * slope))


def softmax2d(input: Tensor) -> Tensor:
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input."""
    if input.ndim not in (3, 4):
        raise ValueError(f"Softmax2d: expected a 3-D or 4-D input, got shape "
                         f"{tuple(input.shape)}")
    return softmax(input, -3)


# ------------------------------------------------------------------ trailing-underscore forms
def relu_(input: Tensor) -> Tensor:
    return relu(input, True)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, True)
