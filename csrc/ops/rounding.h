// Rounding (ceil, floor, trunc, round half-to-even) and floored division.
#pragma once
#include "ops/elementwise_defs.h"

namespace ts {

TS_DECLARE_ELEMENTWISE(ceil);
TS_DECLARE_ELEMENTWISE(floor);
TS_DECLARE_ELEMENTWISE(trunc);
TS_DECLARE_ELEMENTWISE(round);
TS_DECLARE_ELEMENTWISE(floor_divide);
TS_DECLARE_ELEMENTWISE(remainder);

}  // namespace ts
