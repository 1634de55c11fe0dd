#include "ops/special.h"

#include <cmath>

#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"

namespace ts {

#define TS_REAL_SPECIAL(op) TS_DEFINE_ELEMENTWISE(op, kFloatSet, IntToFloat, Same, "real floating")
TS_REAL_SPECIAL(lgamma);
TS_REAL_SPECIAL(digamma);
TS_REAL_SPECIAL(erf);
TS_REAL_SPECIAL(erfc);
TS_REAL_SPECIAL(erfinv);
TS_REAL_SPECIAL(erfcx);
TS_REAL_SPECIAL(ndtr);
TS_REAL_SPECIAL(ndtri);
TS_REAL_SPECIAL(log_ndtr);
TS_REAL_SPECIAL(i0);
TS_REAL_SPECIAL(i0e);
TS_REAL_SPECIAL(i1);
TS_REAL_SPECIAL(i1e);
TS_REAL_SPECIAL(modified_bessel_i0);
TS_REAL_SPECIAL(modified_bessel_i1);
TS_REAL_SPECIAL(entr);
TS_REAL_SPECIAL(logit);
TS_REAL_SPECIAL(xlogy);
TS_REAL_SPECIAL(xlog1py);
TS_REAL_SPECIAL(zeta);
TS_REAL_SPECIAL(gammainc);
TS_REAL_SPECIAL(gammaincc);
TS_REAL_SPECIAL(chebyshev_polynomial_t);
TS_REAL_SPECIAL(chebyshev_polynomial_u);
TS_REAL_SPECIAL(chebyshev_polynomial_v);
TS_REAL_SPECIAL(chebyshev_polynomial_w);
TS_REAL_SPECIAL(hermite_polynomial_h);
TS_REAL_SPECIAL(hermite_polynomial_he);
TS_REAL_SPECIAL(laguerre_polynomial_l);
TS_REAL_SPECIAL(legendre_polynomial_p);
TS_REAL_SPECIAL(polygamma);
#undef TS_REAL_SPECIAL
TS_DEFINE_ELEMENTWISE(sinc, kInexactSet, IntToFloat, Same, "numeric");

namespace {
Tensor as_default_float(const Tensor& x) {
  return is_inexact(x.dtype()) ? x : astype(x, default_float_dtype(), false);
}
}  // namespace

Tensor special_unary(const ElementwiseDef& def, const Tensor& x) {
  return unary_op(def, as_default_float(x));
}

Tensor special_binary(const ElementwiseDef& def, const Tensor& a, const Tensor& b) {
  if (is_inexact(result_type(a, b))) return binary_op(def, a, b);
  return binary_op(def, a.is_wrapped_number() ? a : as_default_float(a),
                   b.is_wrapped_number() ? b : as_default_float(b));
}

Tensor polygamma(int64_t n, const Tensor& x, const char* op) {
  TS_CHECK(n >= 0, RuntimeError, op, ": does not support negative n, got ", n);
  if (n == 0) return special_unary(digamma_def, x);
  // n travels as a weak scalar in x's dtype: n is clamped (keeping its parity) to what that
  // dtype holds exactly. Past n = 170 n! is inf and the value +-inf or nan (0 * inf where
  // zeta(n + 1, x) underflows, as torch's), so only float16/bfloat16's bound changes values,
  // and only for n > 172 (2^24 for float32/float64).
  const Tensor xf = as_default_float(x);
  const bool half = xf.dtype() == DType::Float16 || xf.dtype() == DType::BFloat16;
  const int64_t bound = half ? 172 : (int64_t{1} << 24);
  const int64_t m = n > bound ? bound - (n - bound) % 2 : n;
  return binary_op(polygamma_def, wrap_scalar(Scalar::from_int(m)), xf);
}

Tensor mvlgamma(const Tensor& x, int64_t p, const char* op) {
  TS_CHECK(p >= 1, RuntimeError, op, ": p has to be greater than or equal to 1, got ", p);
  // One lgamma pass per term: a huge p would run for ages.
  TS_CHECK(p <= 65536, ValueError, op, ": p=", p, " is too large (at most 65536 terms)");
  const Tensor xf = as_default_float(x);
  Tensor out = unary_op(lgamma_def, xf);
  for (int64_t i = 1; i < p; ++i)
    out = add(out, unary_op(lgamma_def, subtract(xf, wrap_scalar(Scalar::from_double(0.5 * i)))));
  const double c = static_cast<double>(p) * static_cast<double>(p - 1) / 4.0 * std::log(M_PI);
  return add(out, wrap_scalar(Scalar::from_double(c)));
}

Tensor logit(const Tensor& x, std::optional<double> eps) {
  const Tensor xf = as_default_float(x);
  if (!eps || *eps < 0) return unary_op(logit_def, xf);  // torch: a negative eps clamps nothing
  const Tensor lo = wrap_scalar(Scalar::from_double(*eps));
  const Tensor hi = wrap_scalar(Scalar::from_double(1.0 - *eps));
  return unary_op(logit_def, clip(xf, lo, hi));
}

}  // namespace ts
