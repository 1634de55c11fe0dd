#include "ops/rounding.h"

#include <cmath>

#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/elementwise.h"

namespace ts {

// Integers are already integral: ceil/floor/trunc/round return them unchanged (same dtype).
TS_DEFINE_ELEMENTWISE(ceil, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(floor, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(trunc, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(round, kNumericSet, Promote, Same, "numeric");
// An integer zero divisor raises PyTorch's ZeroDivisionError on the CPU (checks_int_divisor).
TS_DEFINE_STUB(ElementwiseKernel, floor_divide_stub, "floor_divide");
const ElementwiseDef floor_divide_def{
    "floor_divide", &floor_divide_stub, kRealSet, InRule::Promote, OutRule::Same,
    "real-valued numeric", /*checks_int_divisor=*/true};
TS_DEFINE_STUB(ElementwiseKernel, remainder_stub, "remainder");
const ElementwiseDef remainder_def{
    "remainder", &remainder_stub, kRealSet, InRule::Promote, OutRule::Same,
    "real-valued numeric", /*checks_int_divisor=*/true};

Tensor round(const Tensor& x, int64_t decimals, const char* op) {
  if (decimals == 0) return unary_op(round_def, x, op);
  TS_CHECK(is_inexact(x.dtype()), TypeError, op, ": decimals=", decimals,
           " is not implemented for ", dtype_name(x.dtype()),
           " tensors; hint: integers are already rounded (decimals=0), or cast to a float dtype");
  const Tensor p = wrap_scalar(Scalar::from_double(std::pow(10.0, std::abs(decimals))));
  return decimals > 0 ? divide(unary_op(round_def, multiply(x, p)), p)
                      : multiply(unary_op(round_def, divide(x, p)), p);
}

}  // namespace ts
