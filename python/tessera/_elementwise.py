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

# the C++ activations (csrc/ops/nn/activation_pointwise.h), as nn.functional's
sigmoid, hardshrink, prelu = _C.sigmoid, _C.hardshrink, _C.prelu
# torch.relu / torch.threshold: F's ops without inplace= (csrc/python/bind_pointwise_torch.cpp,
# with fix, float_power, gcd / lcm (integer kernels), frexp, torch.complex and polar; each also
# the Tensor method, and x.equal / x.square are C++ methods there)
relu, threshold = _C._torch.relu, _C._torch.threshold
fix, float_power, gcd, lcm, frexp, polar = (_C.fix, _C.float_power, _C.gcd, _C.lcm, _C.frexp,
                                            _C.polar)
_complex = _C.complex  # ts.complex (served lazily: python/tessera/__init__.py)


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


# (their Tensor methods, the in-place forms x.acosh_(), ... and the aliases x.arccos, x.greater,
# ... are C++: csrc/python/bind_elementwise.cpp, bind_inplace_methods.cpp)


# ---- complex numbers: view_as_real / view_as_complex are C++ views with
# C++ gradients (csrc/ops/views.cpp, csrc/autograd/formulas.cpp)
view_as_real = _C.view_as_real
view_as_complex = _C.view_as_complex


_TORCH_NAMES += ["polar", "view_as_real", "view_as_complex"]
__all__ += ["polar", "view_as_real", "view_as_complex"]
