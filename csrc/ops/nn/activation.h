// The activations with fused kernels (ops/nn_fused.h): GELU (exact or tanh) and ReLU, each one
// autograd node whose backward is the fused backward kernel (autograd/formulas_nn.cpp).
#pragma once
#include <string>

#include "core/tensor.h"

namespace ts::nn {

// approximate: "none" or "tanh" (ValueError otherwise). Integer inputs compute in float32.
Tensor gelu(const Tensor& x, const std::string& approximate);
// max(x, 0); NaN stays NaN.
Tensor relu(const Tensor& x);

}  // namespace ts::nn
