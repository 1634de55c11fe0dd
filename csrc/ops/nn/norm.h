// The normalizations of PyTorch's F: layer_norm and rms_norm over the trailing
// normalized_shape dims, batch/group/instance norm per channel, local_response_norm and
// normalize. layer_norm is one fused kernel and one autograd node (autograd/formulas_nn.cpp)
// for floating inputs of one dtype and device, batch_norm the fused op of ops/batch_norm.h
// (group and instance norm reach it through reshapes); the rest compositions of recorded ops,
// whose formulas give the gradients of every order.
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

// F.batch_norm: ops/batch_norm.h's op, the running statistics required in eval mode.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps);
// Each of num_groups channel groups of (N, C, *) normalized over its channels and positions,
// then scaled/shifted per channel by weight/bias (C,) (undefined for none). Autocast: float32.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps);
// Each (sample, channel) plane of (N, C, *) normalized over its positions (use_input_stats) or
// by the running statistics; with use_input_stats the running buffers (C,) move toward the
// batch means of the per-instance statistics (PyTorch's: batch_norm over (1, N*C, *)).
Tensor instance_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps);
// x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (the window
// [c - size//2, c + (size-1)//2], zero-padded, always divided by size); x (N, C, *).
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k);
// x / max(||x||_p, eps) along `dims` (PyTorch's clamp_min: the norm's gradient passes where it
// is >= eps).
Tensor normalize(const Tensor& x, double p, const Shape& dims, double eps);

}  // namespace ts::nn
