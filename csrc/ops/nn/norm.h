// layer_norm and rms_norm (PyTorch's F.layer_norm / F.rms_norm) over the trailing
// normalized_shape dims. layer_norm is one fused kernel and one autograd node
// (autograd/formulas_nn.cpp) for floating inputs of one dtype and device; otherwise, and for
// rms_norm, a composition of recorded ops.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts::nn {

// weight, bias: undefined or of normalized_shape. CUDA autocast runs it in float32.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps);
// x / sqrt(mean(x^2) + eps) * weight; eps defaults to the dtype's machine epsilon.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps);

}  // namespace ts::nn
