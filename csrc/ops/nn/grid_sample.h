// PyTorch's F.affine_grid and F.grid_sample (Note [Sampling by gathered corners] in
// grid_sample.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts::nn {

// Sampling grids for batches of affine maps: theta (N, 2, 3) with size (N, C, H, W) ->
// (N, H, W, 2), or theta (N, 3, 4) with size (N, C, D, H, W) -> (N, D, H, W, 3).
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners);

// Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo) (5-D: grid
// (N, Do, Ho, Wo, 3)); grid[..., 0] is x (width), in [-1, 1]. mode bilinear, nearest or
// bicubic (4-D only); padding_mode zeros, border or reflection. Differentiable in the input
// and the grid (gradients of every order come from the ops it is written with).
Tensor grid_sample(const Tensor& input, const Tensor& grid, const std::string& mode,
                   const std::string& padding_mode, bool align_corners);

}  // namespace ts::nn
