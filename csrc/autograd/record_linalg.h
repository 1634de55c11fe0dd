// What the composite linalg ops (csrc/ops/linalg_composite.cpp) call to record themselves; the
// formulas are in formulas_linalg.cpp. Each is a no-op unless grad mode is on and x requires
// grad.
#pragma once
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts::autograd {

// p = pinv(x).
void record_pinv(const Tensor& x, const Tensor& p);
// out = max or min of |x| over axes (real floating x).
void record_inf_norm(const Tensor& x, const Tensor& out, const Axes& axes, bool keepdims);

}  // namespace ts::autograd
