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

// torch.round(x, decimals=d): round-half-even of x * 10**d, divided back (for d < 0: x / 10**-d
// rounded, multiplied back), as PyTorch computes it; d = 0 is round. Floating and complex only
// for d != 0 (TypeError naming round otherwise).
Tensor round(const Tensor& x, int64_t decimals, const char* op = "round");

}  // namespace ts
