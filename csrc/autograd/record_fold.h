// What fold/unfold (csrc/ops/nn/fold.cpp) call to record themselves; their formulas are in
// formulas_fold.cpp. Each is a no-op unless grad mode is on and the input requires grad.
#pragma once
#include "core/tensor.h"
#include "ops/nn_fused.h"

namespace ts::autograd {

// cols = im2col(x) for x (N, C, H, W): the gradient is col2im of the cotangent.
void record_im2col(const Tensor& x, const Tensor& cols, const Window2d& win);
// x = col2im(cols) into (N, C, H, W): the gradient is im2col of the cotangent.
void record_col2im(const Tensor& cols, const Tensor& x, const Window2d& win);

}  // namespace ts::autograd
