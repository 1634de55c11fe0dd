"""Activations PyTorch has beyond activation.py (prelu, threshold, hardshrink, softshrink,
rrelu, softmax2d) and the `inplace=` / trailing-underscore in-place forms of them all.

Note [In-place activations under autograd]
``relu_(x)`` computes y = relu(clone(x)) and writes it back with ``x[...] = y``: the write
rebinds x's autograd history to y (or raises for a leaf that requires grad, as in PyTorch),
and the clone keeps the values y's backward saved from being overwritten by that write.
Without autograd the write is all there is (no graph, nothing saved)."""
from __future__ import annotations

from typing import Any, Callable

from ..._C import Tensor
from .. import _rng
from . import activation as _act


def _ts() -> Any:
    import tessera
    return tessera


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
    return _maybe_inplace(input, inplace, _act.relu)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.relu6)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _act.elu(v, alpha))


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _act.celu(v, alpha))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.selu)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _act.leaky_relu(v, negative_slope))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, lambda v: _act.hardtanh(v, min_val, max_val))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.silu)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.mish)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.hardsigmoid)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, inplace, _act.hardswish)


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
    return _act.softmax(input, -3)


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


__all__ = ["relu", "relu6", "elu", "celu", "selu", "leaky_relu", "hardtanh", "silu", "mish",
           "hardsigmoid", "hardswish", "threshold", "hardshrink", "softshrink", "prelu", "rrelu",
           "softmax2d", "relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_",
           "threshold_", "rrelu_"]
