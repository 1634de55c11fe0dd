// What Tensor's conversion ops (csrc/ops/tensor_convert.cpp) call to record themselves; the
// formulas are in formulas_tensor.cpp. No-ops unless grad mode is on and x requires grad.
#pragma once
#include "core/tensor.h"

namespace ts::autograd {

// out = x moved to another device: the gradient moves back to x's device.
void record_to_device(const Tensor& x, const Tensor& out);

}  // namespace ts::autograd
