// Comparisons, maximum/minimum and clip.
#pragma once
#include <optional>

#include "ops/elementwise_defs.h"

namespace ts {

TS_DECLARE_ELEMENTWISE(equal);
TS_DECLARE_ELEMENTWISE(not_equal);
TS_DECLARE_ELEMENTWISE(less);
TS_DECLARE_ELEMENTWISE(less_equal);
TS_DECLARE_ELEMENTWISE(greater);
TS_DECLARE_ELEMENTWISE(greater_equal);
TS_DECLARE_ELEMENTWISE(maximum);
TS_DECLARE_ELEMENTWISE(minimum);

// Note [clip]: clip(x, lo, hi) = minimum(maximum(x, lo), hi) in x's dtype, like NumPy: where
// lo > hi the result is hi, and NaN in x or in a bound gives NaN. x and the bounds broadcast
// together (the standard and torch.clamp: clip(zeros(2), min=zeros((3, 1))) has shape (3, 2));
// the in-place x.clamp_ cannot grow x. `op` names the caller in errors (clamp, x.clamp_, ...).
Tensor clip(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
            const char* op = "clip");
// A bound of clip in x's dtype, checked to broadcast with x's shape; `which` is "min" or "max".
Tensor clip_bound(const Tensor& x, const Tensor& bound, const char* which, const char* op);

}  // namespace ts
