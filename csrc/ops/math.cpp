#include "ops/math.h"

#include <cstring>

#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/reduce.h"

namespace ts {

#define TS_INEXACT_UNARY(op) TS_DEFINE_ELEMENTWISE(op, kInexactSet, IntToFloat, Same, "numeric")
TS_INEXACT_UNARY(acos);
TS_INEXACT_UNARY(acosh);
TS_INEXACT_UNARY(asin);
TS_INEXACT_UNARY(asinh);
TS_INEXACT_UNARY(atan);
TS_INEXACT_UNARY(atanh);
TS_INEXACT_UNARY(cos);
TS_INEXACT_UNARY(cosh);
TS_INEXACT_UNARY(sin);
TS_INEXACT_UNARY(sinh);
TS_INEXACT_UNARY(tan);
TS_INEXACT_UNARY(tanh);
TS_INEXACT_UNARY(exp);
TS_INEXACT_UNARY(expm1);
TS_INEXACT_UNARY(log);
TS_INEXACT_UNARY(log1p);
TS_INEXACT_UNARY(log2);
TS_INEXACT_UNARY(log10);
TS_INEXACT_UNARY(sqrt);
TS_INEXACT_UNARY(reciprocal);
#undef TS_INEXACT_UNARY

#define TS_REAL_FLOAT_BINARY(op) \
  TS_DEFINE_ELEMENTWISE(op, kFloatSet, IntToFloat, Same, "real-valued (not complex)")
TS_REAL_FLOAT_BINARY(atan2);
TS_REAL_FLOAT_BINARY(hypot);
TS_REAL_FLOAT_BINARY(logaddexp);
TS_REAL_FLOAT_BINARY(copysign);
TS_REAL_FLOAT_BINARY(nextafter);
#undef TS_REAL_FLOAT_BINARY

TS_DEFINE_ELEMENTWISE(abs, kNumericSet, Promote, Real, "numeric");
TS_DEFINE_ELEMENTWISE(sign, kNumericSet, Promote, Same, "numeric");
TS_DEFINE_ELEMENTWISE(square, kNumericSet, Promote, Same, "numeric");
TS_DEFINE_ELEMENTWISE(positive, kNumericSet, Promote, Same, "numeric");
TS_DEFINE_ELEMENTWISE(pow, kNumericSet, Promote, Same, "numeric");
TS_DEFINE_ELEMENTWISE(real, kComplexSet, Promote, Real, "numeric");
TS_DEFINE_ELEMENTWISE(imag, kComplexSet, Promote, Real, "numeric");

TS_DEFINE_ELEMENTWISE(isfinite, kAllSet, Promote, Bool, "numeric");
TS_DEFINE_ELEMENTWISE(isinf, kAllSet, Promote, Bool, "numeric");
TS_DEFINE_ELEMENTWISE(isnan, kAllSet, Promote, Bool, "numeric");
TS_DEFINE_ELEMENTWISE(signbit, kRealSet, Promote, Bool, "real-valued");

namespace {
// True when any element of the signed-integer tensor `b` is negative. The check runs before
// the kernel because a kernel can't raise (it may run inside a parallel region).
bool any_negative(const Tensor& b) {
  // Reduced on b's device; only the one answer comes back to the host.
  const Tensor neg = binary_op(less_def, b, wrap_scalar(Scalar::from_int(0)));
  return item(any(neg, std::nullopt, false)).to<bool>();
}

void check_int_exponents(const Tensor& a, const Tensor& b, const char* op) {
  const DType c = compute_dtype(pow_def, result_type(a, b), a.dtype(), b.dtype(), op);
  if (is_signed_int(c) && !is_unsigned_int(b.dtype()) && any_negative(b))
    throw ValueError(str(op,
                         ": integers to negative integer powers are not allowed; hint: cast the "
                         "base to a floating dtype first"));
}
}  // namespace

Tensor pow(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor x = a, y = b;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("pow"), x, y);
    return pow(x, y);
  }
  check_int_exponents(a, b, "pow");
  return binary_op(pow_def, a, b);
}

void pow_(const Tensor& a, const Tensor& b) {
  check_int_exponents(a, b, "pow_");
  binary_op_(pow_def, a, b, "pow_");
}

Tensor real(const Tensor& x) {
  TS_CHECK(!is_bool(x.dtype()), TypeError,
           "real: not supported for dtype bool (expected numeric input)");
  return is_complex(x.dtype()) ? unary_op(real_def, x) : x;
}

Tensor imag(const Tensor& x) {
  if (is_complex(x.dtype())) return unary_op(imag_def, x);
  TS_CHECK(!is_bool(x.dtype()), TypeError,
           "imag: not supported for dtype bool (expected numeric input)");
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  fill_(out, Scalar::from_int(0));
  return out;
}

}  // namespace ts
