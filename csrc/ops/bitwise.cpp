#include "ops/bitwise.h"

namespace ts {

#define TS_BITWISE(op) \
  TS_DEFINE_ELEMENTWISE(op, kIntSet | kBoolSet, Promote, Same, "integer or boolean")
TS_BITWISE(bitwise_and);
TS_BITWISE(bitwise_or);
TS_BITWISE(bitwise_xor);
TS_BITWISE(bitwise_invert);
#undef TS_BITWISE
TS_DEFINE_ELEMENTWISE(bitwise_left_shift, kIntSet, Promote, Same, "integer");
TS_DEFINE_ELEMENTWISE(bitwise_right_shift, kIntSet, Promote, Same, "integer");
TS_DEFINE_ELEMENTWISE(gcd, kIntSet, Promote, Same, "integer");
TS_DEFINE_ELEMENTWISE(lcm, kIntSet, Promote, Same, "integer");

// Logical ops take any dtype by truthiness (nonzero is true), like NumPy and PyTorch.
TS_DEFINE_ELEMENTWISE(logical_and, kAllSet, Promote, Bool, "any");
TS_DEFINE_ELEMENTWISE(logical_or, kAllSet, Promote, Bool, "any");
TS_DEFINE_ELEMENTWISE(logical_xor, kAllSet, Promote, Bool, "any");
TS_DEFINE_ELEMENTWISE(logical_not, kAllSet, Promote, Bool, "any");

}  // namespace ts
