#include "ops/arithmetic.h"

#include <cstring>

#include "autograd/record.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/reduce.h"
#include "ops/rounding.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(ElementwiseKernel, add_stub, "add");
TS_DEFINE_STUB(ElementwiseKernel, subtract_stub, "subtract");
TS_DEFINE_STUB(ElementwiseKernel, multiply_stub, "multiply");
TS_DEFINE_STUB(ElementwiseKernel, divide_stub, "divide");
TS_DEFINE_STUB(ElementwiseKernel, negative_stub, "negative");
TS_DEFINE_STUB(ElementwiseKernel, conj_stub, "conj");

const ElementwiseDef kAdd{"add", &add_stub, kAllSet, InRule::Promote, OutRule::Same, "numeric"};
const ElementwiseDef kSubtract{"subtract",    &subtract_stub,
                               kNumericSet,   InRule::Promote,
                               OutRule::Same, "numeric (use logical_xor for booleans)"};
const ElementwiseDef kMultiply{"multiply",      &multiply_stub, kAllSet,
                               InRule::Promote, OutRule::Same,  "numeric"};
const ElementwiseDef kDivide{"divide",           &divide_stub,  kInexactSet,
                             InRule::IntToFloat, OutRule::Same, "numeric"};
const ElementwiseDef kNegative{"negative",    &negative_stub,
                               kNumericSet,   InRule::Promote,
                               OutRule::Same, "numeric (use logical_not for booleans)"};

const ElementwiseDef kConj{"conj",          &conj_stub,    kComplexSet,
                           InRule::Promote, OutRule::Same, "complex"};

Tensor conj(const Tensor& x) {
  TS_CHECK(!is_bool(x.dtype()), TypeError,
           "conj: not supported for dtype bool (expected numeric input)");
  return is_complex(x.dtype()) ? unary_op(kConj, x) : x;
}

// Note [Arithmetic argument forms]: add/subtract take PyTorch's alpha= and divide its
// rounding_mode=, here in the op (one definition for ts.add, x.add, x.add_ and their
// aliases; the bindings only parse). Where the former Python twins disagreed PyTorch won:
// integer trunc/floor division is exact in the integer dtype, a zero integer divisor raises
// on the CPU, a floating alpha with integral operands raises in every form.
namespace {

bool integral_or_bool(DType d) { return is_integral(d) || is_bool(d); }

// alpha * b; a wrapped Python number stays one (the product of two Python numbers).
Tensor scaled(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  const bool inexact = alpha.kind == ScalarKind::Float || alpha.kind == ScalarKind::Complex;
  if (inexact && integral_or_bool(a.dtype()) && integral_or_bool(b.dtype()))
    throw TypeError(str(op, ": for integral input tensors (", dtype_name(a.dtype()), " and ",
                        dtype_name(b.dtype()),
                        "), argument alpha must not be a floating point number; hint: pass an "
                        "integer alpha or cast the operands to a floating dtype"));
  if (!b.is_wrapped_number()) return multiply(b, wrap_scalar(alpha));
  const Scalar s = item(b);
  if (s.kind == ScalarKind::Complex || alpha.kind == ScalarKind::Complex)
    return wrap_scalar(Scalar::from_complex(s.to<c128>() * alpha.to<c128>()));
  if (s.kind == ScalarKind::Float || inexact)
    return wrap_scalar(Scalar::from_double(s.to<double>() * alpha.to<double>()));
  // Python ints multiply exactly; int64 wraps (as PyTorch's int64 alpha * other)
  return wrap_scalar(Scalar::from_int(static_cast<int64_t>(
      static_cast<uint64_t>(s.to<int64_t>()) * static_cast<uint64_t>(alpha.to<int64_t>()))));
}

bool is_one(const Scalar& alpha) {
  return (alpha.kind == ScalarKind::Int || alpha.kind == ScalarKind::Bool) && !alpha.is_u64 &&
         alpha.i == 1;
}

// a / b rounded toward zero in an integer dtype, exactly: floor division, plus one where the
// quotient is negative and inexact.
Tensor trunc_divide_integral(const Tensor& a, const Tensor& b, const char* op) {
  const Tensor fq = binary_op(floor_divide_def, a, b, op);
  const Tensor inexact = binary_op(not_equal_def, multiply(fq, b), a);
  const Tensor negative = binary_op(less_def, fq, wrap_scalar(Scalar::from_int(0)));
  return where(binary_op(logical_and_def, negative, inexact),
               add(fq, wrap_scalar(Scalar::from_int(1))), fq);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  return is_one(alpha) ? add(a, b) : add(a, scaled(a, b, alpha, op));
}

Tensor subtract(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  return is_one(alpha) ? subtract(a, b) : subtract(a, scaled(a, b, alpha, op));
}

RoundingMode rounding_mode_of(const char* mode, const char* op) {
  if (mode == nullptr) return RoundingMode::None;
  if (std::strcmp(mode, "trunc") == 0) return RoundingMode::Trunc;
  if (std::strcmp(mode, "floor") == 0) return RoundingMode::Floor;
  throw ValueError(str(op, " expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           "found '",
                       mode, "'"));
}

Tensor divide(const Tensor& a, const Tensor& b, RoundingMode mode, const char* op) {
  if (mode == RoundingMode::None) return divide(a, b);
  const DType promoted = result_type(a, b);
  if (!integral_or_bool(promoted))
    return mode == RoundingMode::Trunc ? unary_op(trunc_def, divide(a, b))
                                       : binary_op(floor_divide_def, a, b);
  // floor_divide raises for a zero divisor (ElementwiseDef::checks_int_divisor)
  return mode == RoundingMode::Trunc ? trunc_divide_integral(a, b, op)
                                     : binary_op(floor_divide_def, a, b, op);
}

void add_(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  binary_op_(kAdd, a, is_one(alpha) ? b : scaled(a, b, alpha, op), op);
}

void subtract_(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op) {
  binary_op_(kSubtract, a, is_one(alpha) ? b : scaled(a, b, alpha, op), op);
}

void divide_(const Tensor& a, const Tensor& b, RoundingMode mode, const char* op) {
  if (mode == RoundingMode::None) return binary_op_(kDivide, a, b, op);
  autograd::check_inplace(a, op);
  assign_inplace_result(op, a, divide(a, b, mode, op));
}

}  // namespace ts
