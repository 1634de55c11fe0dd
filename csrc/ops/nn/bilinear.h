// bilinear (PyTorch's F.bilinear / torch.bilinear), written with recorded ops.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts::nn {

// y_k = x1 W_k x2 + b_k for weight (out, in1, in2), x1 (..., in1), x2 (..., in2) (the leading
// dims broadcast), bias (out,). A matmul, a product and a sum, so the gradients are theirs.
// Autocast: PyTorch's CPU list leaves bilinear alone (its matmul autocasts); on CUDA the
// operands are promoted to the widest floating type and the body runs without autocast.
Tensor bilinear(const Tensor& x1, const Tensor& x2, const Tensor& weight,
                const std::optional<Tensor>& bias);

}  // namespace ts::nn
