// Bitwise ops on integers and booleans, and the logical ops (any dtype, by truthiness).
#pragma once
#include "ops/elementwise_defs.h"

namespace ts {

TS_DECLARE_ELEMENTWISE(bitwise_and);
TS_DECLARE_ELEMENTWISE(bitwise_or);
TS_DECLARE_ELEMENTWISE(bitwise_xor);
TS_DECLARE_ELEMENTWISE(bitwise_invert);
TS_DECLARE_ELEMENTWISE(bitwise_left_shift);
TS_DECLARE_ELEMENTWISE(bitwise_right_shift);
// Greatest common divisor and least common multiple of integers (non-negative; torch.gcd/lcm).
TS_DECLARE_ELEMENTWISE(gcd);
TS_DECLARE_ELEMENTWISE(lcm);
TS_DECLARE_ELEMENTWISE(logical_and);
TS_DECLARE_ELEMENTWISE(logical_or);
TS_DECLARE_ELEMENTWISE(logical_xor);
TS_DECLARE_ELEMENTWISE(logical_not);

}  // namespace ts
