// linear (PyTorch's F.linear): y = x W^T + b as one op and one autograd node whose backward
// forms W's gradient in its (out, in) layout (autograd/formulas_nn.cpp). Autocast runs it in
// the lower precision (PyTorch's list).
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// x (..., K), weight (N, K), bias (N,) or undefined -> (..., N).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

}  // namespace ts::nn
