"""Elementwise functions of the array API standard (2024.12), and PyTorch's (relu, sigmoid,
rsqrt, logit, xlogy, lerp, addcmul, fmod, float_power, isclose, nan_to_num, clamp, the
arc*/comparison aliases, ...) with their Tensor methods.

The standard's functions are bound in C++ (csrc/python/bind_elementwise.cpp, with their
docstrings); this module gathers them into the namespace. Each takes its operands
positionally; binary functions accept tensors or Python numbers (weak in promotion) as long
as one operand is a tensor, and broadcast. Integer and boolean inputs of the float-only
functions (exp, sin, sqrt, divide, ...) compute in float32.
"""
from __future__ import annotations

import builtins
import math
from collections import namedtuple
from typing import Any

import numpy as np

from . import _C
from ._C import Tensor
from ._C import (  # noqa: F401
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
    bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clip, conj,
    copysign, cos, cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal,
    hypot, imag, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, multiply, negative,
    nextafter, not_equal, positive, pow, real, reciprocal, remainder, round, sign, signbit, sin,
    sinh, sqrt, square, subtract, tan, tanh, trunc,
    sub, mul, div, true_divide,  # PyTorch's forms and aliases (the same function objects)
    # PyTorch's pointwise functions (csrc/python/bind_elementwise.cpp; Tensor.clamp is ts.clamp)
    clamp, clamp_min, clamp_max, lerp, addcmul, addcdiv, nan_to_num, isclose, allclose, fmod,
    rsqrt, exp2, frac, deg2rad, rad2deg, isposinf, isneginf, sgn, fmax, fmin, logaddexp2, ldexp,
    heaviside, angle, isreal, rsub,
)
from ._dtypes import (bool as bool_, complex64, complex128, float16, bfloat16, float32,
                      float64)

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clamp", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1",
    "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf",
    "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc",
]


# ---- PyTorch's elementwise functions and aliases
# PyTorch-style elementwise functions and aliases (relu, sigmoid, rsqrt, logit, xlogy, lerp,
# addcmul, fmod, float_power, isclose, nan_to_num, ...), as functions and Tensor methods,
# built from differentiable tessera ops. Integer and bool inputs of float functions compute in
# float32 (torch's default dtype).
_TORCH_NAMES = ["relu", "sigmoid", "rsqrt", "exp2", "frac", "fix", "sinc", "deg2rad", "rad2deg",
                "logit", "xlogy", "float_power", "fmod", "lerp", "addcmul", "addcdiv", "clamp_min",
                "clamp_max", "isclose", "allclose", "isposinf", "isneginf", "isreal", "nan_to_num",
                "sgn", "heaviside", "fmax", "fmin", "logaddexp2", "ldexp", "absolute", "arccos",
                "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "bitwise_not",
                "mul", "sub", "div", "true_divide", "neg", "ge", "gt", "le", "lt", "ne", "eq",
                "erf", "erfc", "erfinv", "lgamma", "digamma", "angle", "gcd", "lcm", "frexp",
                "hardshrink", "prelu", "mvlgamma", "polygamma",
                "threshold", "rsub", "clamp"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES

_FLOATS = (float16, bfloat16, float32, float64)
_COMPLEX = (complex64, complex128)


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else _C._wrap_scalar(x) if not hasattr(x, "__len__") \
        else _ts().asarray(x)


def _ts() -> Any:
    import tessera
    return tessera


# the C++ activations (csrc/ops/nn/activation_pointwise.h), as nn.functional's
sigmoid, hardshrink, prelu = _C.sigmoid, _C.hardshrink, _C.prelu


def relu(input: Tensor) -> Tensor:
    """torch.relu: max(input, 0), NaN stays NaN (F.relu's op without its inplace=)."""
    return _C.relu(input)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """torch.threshold: input where input > threshold, else value (F.threshold's op without
    its inplace=)."""
    return _C.threshold(input, threshold, value)


def fix(input: Tensor) -> Tensor:
    """Rounds toward zero (alias of trunc)."""
    return _C.trunc(input)


def float_power(input: Any, exponent: Any) -> Tensor:
    """input ** exponent in float64 (complex128 when either is complex)."""
    x, y = _t(input), _t(exponent)
    cplx = x.dtype in _COMPLEX or y.dtype in _COMPLEX or isinstance(exponent, builtins.complex)
    dt = complex128 if cplx else float64
    x = _C._astype(x, dt, True)
    y = exponent if isinstance(exponent, (builtins.int, builtins.float)) else _C._astype(y, dt, True)
    return _C.pow(x, y)


def _equal_method(input: Tensor, other: Tensor) -> builtins.bool:
    """torch.equal: same shape and the same values (NaN != NaN)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_C._all(input == other, None, False))


def _gcd_np(a: Any, b: Any, op: str) -> Tensor:
    import numpy as np
    x, y = _t(a), _t(b)
    for v in (x, y):
        if v.dtype in _FLOATS + _COMPLEX + (bool_,):
            raise RuntimeError(f"{op}: not implemented for {v.dtype}")
    fn = np.gcd if op == "gcd" else np.lcm
    res = fn(np.asarray(x.cpu()), np.asarray(y.cpu()))
    return _ts().asarray(res, dtype=_C._promote_types(x.dtype, y.dtype), device=x.device)


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """Greatest common divisor of integer tensors (non-negative)."""
    return _gcd_np(input, other, "gcd")


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """Least common multiple of integer tensors (non-negative)."""
    return _gcd_np(input, other, "lcm")


from .special import (  # noqa: E402  (the C++ special functions: csrc/ops/special.h)
    digamma, erf, erfc, erfinv, lgamma, logit, mvlgamma, polygamma, sinc, xlogy,
)

# Aliases whose target is a standard function.
absolute = _C.abs
arccos, arccosh, arcsin, arcsinh = _C.acos, _C.acosh, _C.asin, _C.asinh
arctan, arctan2, arctanh = _C.atan, _C.atan2, _C.atanh
bitwise_not = _C.bitwise_invert
neg = _C.negative
ge, gt, le, lt = _C.greater_equal, _C.greater, _C.less_equal, _C.less
ne, eq = _C.not_equal, _C.equal
def _square_method(input: Tensor) -> Tensor:
    """x.square(): input * input (bool input gives int64, as torch's pow(x, 2)); the
    namespace's ts.square stays the standard one."""
    return _C.square(_C._astype(input, _C.int64, True) if input.dtype == bool_ else input)




FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])  # torch.return_types.frexp


def frexp(input: Tensor) -> Any:
    """(mantissa, exponent) with input == mantissa * 2**exponent, |mantissa| in [0.5, 1);
    a named tuple with fields mantissa and exponent like torch.return_types.frexp."""
    if input.dtype not in _FLOATS:
        raise RuntimeError(f"frexp: only supports floating-point dtypes, got {input.dtype}")
    mant, exp = np.frexp(np.asarray(input.detach().cpu()))
    dev = input.device
    return FrexpResult(_ts().asarray(mant, dtype=input.dtype, device=dev),
                       _ts().asarray(exp.astype(np.int32), device=dev))



# name -> out-of-place implementation; each becomes a Tensor method and gets an in-place
# twin `name_` (Note [torch in-place] in _inplace.py).
METHODS = {
    "relu": relu, "sigmoid": sigmoid, "fix": fix, "float_power": float_power,
    "gcd": gcd, "lcm": lcm, "absolute": absolute, "arccos": arccos, "arccosh": arccosh,
    "arcsin": arcsin, "arcsinh": arcsinh, "arctan": arctan, "arctan2": arctan2,
    "arctanh": arctanh, "bitwise_not": bitwise_not,
    "greater": gt, "greater_equal": ge, "less": lt,
    "less_equal": le, "not_equal": ne, "square": _square_method, "acosh": _C.acosh, "asinh": _C.asinh, "atanh": _C.atanh,
    "hypot": _C.hypot, "copysign": _C.copysign, "nextafter": _C.nextafter, "positive": _C.positive,
    "bitwise_left_shift": _C.bitwise_left_shift, "bitwise_right_shift": _C.bitwise_right_shift,
    "logaddexp": _C.logaddexp,
    "equal": _equal_method, "threshold": threshold,
}
# Methods that need only the in-place twin (the method itself exists already).
INPLACE_OF_EXISTING = [
    "abs", "acos", "asin", "atan", "cos", "cosh", "sin", "sinh", "tan", "tanh", "exp", "expm1",
    "log", "log10", "log1p", "log2", "sqrt", "ceil", "floor", "trunc", "round", "sign",
    "reciprocal", "neg", "negative", "pow", "remainder", "atan2", "bitwise_and", "bitwise_or",
    "bitwise_xor", "logical_and", "logical_or", "logical_xor", "logical_not",
    "floor_divide", "masked_scatter",
    # PyTorch's pointwise functions bound in C++ (csrc/python/bind_elementwise.cpp)
    "clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv", "nan_to_num", "fmod",
    "rsqrt", "exp2", "frac", "deg2rad", "rad2deg", "sgn", "heaviside", "ldexp", "index_fill", "index_copy", "index_put",
    "scatter_reduce", "tril", "triu", "cumsum", "cumprod", "squeeze", "unsqueeze", "t",
    "transpose", "swapaxes", "swapdims", "conj_physical", "eq", "ne", "lt", "le", "gt", "ge",
    # the special functions' methods, bound in C++ (csrc/python/bind_special.cpp)
    "sinc", "logit", "xlogy", "erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "igamma",
    "igammac",
]
NO_INPLACE = {"equal", "real", "imag",
              "positive", "logaddexp", "add", "sub",
              "div"}


# ---- complex numbers: torch.complex, polar; view_as_real / view_as_complex are C++ views with
# C++ gradients (csrc/ops/views.cpp, csrc/autograd/formulas.cpp)
view_as_real = _C.view_as_real
view_as_complex = _C.view_as_complex


def _complex(real: Tensor, imag: Tensor) -> Tensor:
    """real + 1j * imag from two float tensors of the same dtype (torch.complex)."""
    ts = _ts()
    if real.dtype != imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype} but got scalar type "
                           f"{imag.dtype} for second argument")
    if real.dtype not in (ts.float32, ts.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype} and {imag.dtype}")
    cdt = ts.complex64 if real.dtype == ts.float32 else ts.complex128
    return real.astype(cdt) + imag.astype(cdt) * 1j


def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """abs * (cos(angle) + 1j sin(angle)) (torch.polar)."""
    ts = _ts()
    return _complex(abs * ts.cos(angle), abs * ts.sin(angle))


_complex.__name__ = _complex.__qualname__ = "complex"  # ts.complex (served lazily)


_TORCH_NAMES += ["polar", "view_as_real", "view_as_complex"]
__all__ += ["polar", "view_as_real", "view_as_complex"]
