#include "ops/rounding.h"

namespace ts {

// Integers are already integral: ceil/floor/trunc/round return them unchanged (same dtype).
TS_DEFINE_ELEMENTWISE(ceil, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(floor, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(trunc, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(round, kNumericSet, Promote, Same, "numeric");
TS_DEFINE_ELEMENTWISE(floor_divide, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(remainder, kRealSet, Promote, Same, "real-valued numeric");

}  // namespace ts
