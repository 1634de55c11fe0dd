"""Elementwise functions of the array API standard (2024.12).

The functions themselves are bound in C++ (csrc/python/bind_elementwise.cpp, with their
docstrings); this module gathers them into the namespace. Each takes its operands
positionally; binary functions accept tensors or Python numbers (weak in promotion) as long
as one operand is a tensor, and broadcast. Integer and boolean inputs of the float-only
functions (exp, sin, sqrt, divide, ...) compute in float32.
"""
from __future__ import annotations

from ._C import (  # noqa: F401
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
    bitwise_left_shift, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clamp, clip, conj,
    copysign, cos, cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal,
    hypot, imag, isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, multiply, negative,
    nextafter, not_equal, positive, pow, real, reciprocal, remainder, round, sign, signbit, sin,
    sinh, sqrt, square, subtract, tan, tanh, trunc,
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
