// torch.special's elementwise functions (scipy.special names): the gamma family, error
// functions, modified Bessel functions, entropy and log helpers. Scalar math in
// kernels/special_math.h (shared by the CPU and CUDA kernels), gradients in
// autograd/formulas_special.cpp. Integer and bool inputs compute in set_default_dtype's dtype
// (special_unary/special_binary below), as torch's; complex inputs raise (sinc aside).
#pragma once
#include <optional>

#include "ops/default_dtype.h"
#include "ops/elementwise_defs.h"

namespace ts {

// Unary, real floating.
TS_DECLARE_ELEMENTWISE(lgamma);
TS_DECLARE_ELEMENTWISE(digamma);
TS_DECLARE_ELEMENTWISE(erf);
TS_DECLARE_ELEMENTWISE(erfc);
TS_DECLARE_ELEMENTWISE(erfinv);
TS_DECLARE_ELEMENTWISE(erfcx);
TS_DECLARE_ELEMENTWISE(ndtr);
TS_DECLARE_ELEMENTWISE(ndtri);
TS_DECLARE_ELEMENTWISE(log_ndtr);
TS_DECLARE_ELEMENTWISE(i0);
TS_DECLARE_ELEMENTWISE(i0e);
TS_DECLARE_ELEMENTWISE(i1);
TS_DECLARE_ELEMENTWISE(i1e);
// torch.special.modified_bessel_i0/i1: the values of i0/i1, not differentiable (as torch's).
TS_DECLARE_ELEMENTWISE(modified_bessel_i0);
TS_DECLARE_ELEMENTWISE(modified_bessel_i1);
TS_DECLARE_ELEMENTWISE(entr);
TS_DECLARE_ELEMENTWISE(logit);
// Unary, inexact (complex too).
TS_DECLARE_ELEMENTWISE(sinc);
// Binary, real floating: (x, y) broadcast.
TS_DECLARE_ELEMENTWISE(xlogy);
TS_DECLARE_ELEMENTWISE(xlog1py);
TS_DECLARE_ELEMENTWISE(zeta);       // (x, q)
TS_DECLARE_ELEMENTWISE(gammainc);   // (a, x): the regularized lower incomplete gamma P
TS_DECLARE_ELEMENTWISE(gammaincc);  // (a, x): Q = 1 - P
TS_DECLARE_ELEMENTWISE(polygamma);  // (n as a 0-d tensor, x); use polygamma() below
// Orthogonal polynomials P_n(x), (x, n) broadcast (n truncates toward zero); not
// differentiable, as torch's (Note [polynomials of large degree] in kernels/special_math.h).
TS_DECLARE_ELEMENTWISE(chebyshev_polynomial_t);
TS_DECLARE_ELEMENTWISE(chebyshev_polynomial_u);
TS_DECLARE_ELEMENTWISE(chebyshev_polynomial_v);
TS_DECLARE_ELEMENTWISE(chebyshev_polynomial_w);
TS_DECLARE_ELEMENTWISE(hermite_polynomial_h);
TS_DECLARE_ELEMENTWISE(hermite_polynomial_he);
TS_DECLARE_ELEMENTWISE(laguerre_polynomial_l);
TS_DECLARE_ELEMENTWISE(legendre_polynomial_p);

// unary_op/binary_op of a def above, with integer/bool operands first cast to
// default_float_dtype() (where the promoted dtype is not floating; a weak Python number
// stays weak).
Tensor special_unary(const ElementwiseDef& def, const Tensor& x);
Tensor special_binary(const ElementwiseDef& def, const Tensor& a, const Tensor& b);

// The n-th derivative of digamma (n >= 0, else RuntimeError as torch's).
Tensor polygamma(int64_t n, const Tensor& x, const char* op = "polygamma");
// sum_{i<p} lgamma(x - i/2) + p(p-1)/4 log(pi) (1 <= p <= 65536).
Tensor mvlgamma(const Tensor& x, int64_t p, const char* op = "mvlgamma");
// log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given (torch's gradient:
// 0 outside the bounds).
Tensor logit(const Tensor& x, std::optional<double> eps);

}  // namespace ts
