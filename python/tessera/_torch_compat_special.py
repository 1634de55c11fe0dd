"""Special functions torch has as Tensor methods: lgamma, digamma (series built from
differentiable tessera ops, computed in float64) and erfinv (an autograd Function).

Note [gamma series]: for x >= 0.5 both use the recurrence to shift the argument to z = x + 10
and the asymptotic (Stirling / de Moivre) series there, whose truncation error at z >= 10.5 is
below 1e-15; x < 0.5 uses the reflection formula. Autograd differentiates the series term by
term, which gives the series of the derivative, so gradients are as accurate as values. Poles
(x = 0, -1, -2, ...) are mapped like torch: lgamma -> inf, digamma(+-0) -> -+inf, digamma at
negative integers -> NaN.
"""
from __future__ import annotations

import math
from typing import Any

from . import _C
from ._C import Tensor
from ._dtypes import float16, bfloat16, float32, float64
from .autograd.function import Function, FunctionCtx

_SHIFT = 10


def _as_float64(input: Tensor) -> Any:
    dt = input.dtype if input.dtype in (float16, bfloat16, float32, float64) else float32
    if input.dtype in (_C.complex64, _C.complex128):
        raise RuntimeError(f"special function: not implemented for {input.dtype}")
    x = input if input.dtype == float64 else _C._astype(input, float64, True)
    return x, dt


def _lgamma_pos(x: Tensor) -> Tensor:
    """lgamma for x >= 0.5 (Note [gamma series])."""
    z = x + _SHIFT
    logs = _C.log(x)
    for k in range(1, _SHIFT):
        logs = logs + _C.log(x + k)
    r = _C.reciprocal(z)
    r2 = r * r
    series = r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (
        1 / 1680 - r2 * (1 / 1188 - r2 * (691 / 360360 - r2 * (1 / 156)))))))
    return (z - 0.5) * _C.log(z) - z + 0.5 * math.log(2 * math.pi) + series - logs


def _digamma_pos(x: Tensor) -> Tensor:
    """digamma for x >= 0.5 (Note [gamma series])."""
    z = x + _SHIFT
    acc = _C.reciprocal(x)
    for k in range(1, _SHIFT):
        acc = acc + _C.reciprocal(x + k)
    r = _C.reciprocal(z)
    r2 = r * r
    series = r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (
        1 / 132 - r2 * (691 / 32760 - r2 * (1 / 12)))))))
    return _C.log(z) - 0.5 * r - series - acc


def _is_pole(x: Tensor) -> Tensor:
    return (x <= 0) & (_C.floor(x) == x)


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(input)| (float result; +inf at the poles 0, -1, -2, ... and at +-inf)."""
    x, dt = _as_float64(input)
    refl = x < 0.5
    pole = _is_pole(x) | _C.isinf(x)
    xs = _C.where(pole, 1.0, x)  # keeps the unselected branches finite (and their grads)
    lg = _lgamma_pos(_C.where(refl, 1.0 - xs, xs))
    s = _C.abs(_C.sin(math.pi * _C.where(refl, xs, 0.5)))
    out = _C.where(refl, math.log(math.pi) - _C.log(s) - lg, lg)
    return _C._astype(_C.where(pole, math.inf, out), dt, True)


def digamma(input: Tensor) -> Tensor:
    """d/dx log Gamma(x) (float result; -inf at 0, NaN at negative integers and -inf)."""
    x, dt = _as_float64(input)
    refl = x < 0.5
    pole = _is_pole(x)
    xs = _C.where(pole | _C.isinf(x), 1.0, x)
    dg = _digamma_pos(_C.where(refl, 1.0 - xs, xs))
    out = _C.where(refl, dg - math.pi / _C.tan(math.pi * _C.where(refl, xs, 0.25)), dg)
    out = _C.where(x == math.inf, math.inf, _C.where(x == -math.inf, math.nan, out))
    zero = _C.where(_C.signbit(x), math.inf, -math.inf)  # torch: digamma(-0.0) = +inf
    out = _C.where(pole, _C.where(x == 0, zero, math.nan), out)
    return _C._astype(out, dt, True)


_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefs: tuple, w: Tensor) -> Tensor:
    p = w * 0 + coefs[0]
    for c in coefs[1:]:
        p = p * w + c
    return p


def _erfinv_values(x: Tensor) -> Tensor:
    """erfinv by Giles' approximation refined with Newton steps on erf (no autograd)."""
    from .nn.functional.activation import erf
    inside = _C.abs(x) < 1
    xs = _C.where(inside, x, 0.0)
    w = -_C.log((1.0 - xs) * (1.0 + xs))
    central = _horner(_GILES_CENTRAL, w - 2.5)
    tail = _horner(_GILES_TAIL, _C.sqrt(_C.where(w < 5, 5.0, w)) - 3.0)
    y = _C.where(w < 5, central, tail) * xs
    for _ in range(2):
        y = y - (erf(y) - xs) / (_C.exp(-y * y) * (2 / math.sqrt(math.pi)))
    edge = _C.where(x == 1, math.inf, _C.where(x == -1, -math.inf, math.nan))
    return _C.where(inside, y, edge)


class _ErfInv(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        y = _erfinv_values(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        return g * (math.sqrt(math.pi) / 2) * _C.exp(y * y)


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function on (-1, 1); +-inf at +-1, NaN outside."""
    x, dt = _as_float64(input)
    return _C._astype(_ErfInv.apply(x), dt, True)
