// Elementwise math: transcendental functions, powers, abs/sign, float predicates, real/imag.
// Integer and boolean inputs of the float-only functions compute in float32 (PyTorch's rule).
#pragma once
#include "ops/elementwise_defs.h"

namespace ts {

// Unary, inexact (IntToFloat): exp, log, trigonometric and hyperbolic functions.
TS_DECLARE_ELEMENTWISE(acos);
TS_DECLARE_ELEMENTWISE(acosh);
TS_DECLARE_ELEMENTWISE(asin);
TS_DECLARE_ELEMENTWISE(asinh);
TS_DECLARE_ELEMENTWISE(atan);
TS_DECLARE_ELEMENTWISE(atanh);
TS_DECLARE_ELEMENTWISE(cos);
TS_DECLARE_ELEMENTWISE(cosh);
TS_DECLARE_ELEMENTWISE(sin);
TS_DECLARE_ELEMENTWISE(sinh);
TS_DECLARE_ELEMENTWISE(tan);
TS_DECLARE_ELEMENTWISE(tanh);
TS_DECLARE_ELEMENTWISE(exp);
TS_DECLARE_ELEMENTWISE(expm1);
TS_DECLARE_ELEMENTWISE(log);
TS_DECLARE_ELEMENTWISE(log1p);
TS_DECLARE_ELEMENTWISE(log2);
TS_DECLARE_ELEMENTWISE(log10);
TS_DECLARE_ELEMENTWISE(sqrt);
TS_DECLARE_ELEMENTWISE(reciprocal);

// Binary, real floating (IntToFloat).
TS_DECLARE_ELEMENTWISE(atan2);
TS_DECLARE_ELEMENTWISE(hypot);
TS_DECLARE_ELEMENTWISE(logaddexp);
TS_DECLARE_ELEMENTWISE(copysign);
TS_DECLARE_ELEMENTWISE(nextafter);

// Numeric, dtype-preserving (abs/real/imag of complex give the real dtype).
TS_DECLARE_ELEMENTWISE(abs);
TS_DECLARE_ELEMENTWISE(sign);
TS_DECLARE_ELEMENTWISE(square);
TS_DECLARE_ELEMENTWISE(positive);
TS_DECLARE_ELEMENTWISE(pow);
TS_DECLARE_ELEMENTWISE(real);
TS_DECLARE_ELEMENTWISE(imag);

// Predicates (bool output).
TS_DECLARE_ELEMENTWISE(isfinite);
TS_DECLARE_ELEMENTWISE(isinf);
TS_DECLARE_ELEMENTWISE(isnan);
TS_DECLARE_ELEMENTWISE(signbit);

// x1 ** x2; integers to negative integer powers raise ValueError (NumPy's rule).
Tensor pow(const Tensor& a, const Tensor& b);
void pow_(const Tensor& a, const Tensor& b);  // a **= b, written into a
// Real part (of a real tensor: itself) and imaginary part (of a real tensor: zeros).
Tensor real(const Tensor& x);
Tensor imag(const Tensor& x);

}  // namespace ts
