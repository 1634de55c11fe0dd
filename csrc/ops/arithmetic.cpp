#include "ops/arithmetic.h"

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

}  // namespace ts
