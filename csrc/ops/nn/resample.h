// Resampling of (N, C, *spatial) inputs: PyTorch's F.interpolate (nearest, nearest-exact,
// linear, bilinear, bicubic, trilinear, area; align_corners, recompute_scale_factor,
// antialias). Note [Separable resampling by gathered taps] in resample.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts::nn {

// A size or scale_factor argument: one value for every spatial dim (seq false, v of length
// 1) or one value per spatial dim (seq true).
template <class T>
struct PerDim {
  std::vector<T> v;
  bool seq = false;
};

// PyTorch's F.interpolate: exactly one of size / scale_factor; align_corners only with the
// interpolating modes (nullopt: False there); antialias only for bilinear and bicubic.
// Differentiable (gradients of every order come from the ops it is written with), on any
// device those ops run on.
Tensor interpolate(const Tensor& x, const std::optional<PerDim<int64_t>>& size,
                   const std::optional<PerDim<double>>& scale_factor, const std::string& mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor,
                   bool antialias);

// An output of `shape` checked before any table is built for it: RuntimeError (naming `op`)
// past int64 bytes, as torch's "storage size calculation overflowed"; MemoryError when a
// large one cannot be allocated (probed).
void check_output_size(const char* op, const Shape& shape, DType dtype, Device device);

}  // namespace ts::nn
