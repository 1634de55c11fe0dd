// PyTorch's F.affine_grid and F.grid_sample (Note [Native grid sampling] and Note [Sampling by
// gathered corners] in grid_sample.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "kernels/grid_sample_math.h"

namespace ts {

// out (N, C, *out) = input x (N, C, *in) sampled at grid (N, *out, K), K = 2 or 3; all three
// contiguous, of one real floating dtype (CPU: float32/float64).
using GridSampleKernel = void (*)(const Tensor& x, const Tensor& grid, const Tensor& out,
                                  const gs::Params& p);
// From gy (out's shape, contiguous): gx += the input's gradient (zero-filled by the caller;
// undefined when not wanted), gg = the grid's gradient (undefined when not wanted).
using GridSampleBackwardKernel = void (*)(const Tensor& gy, const Tensor& x, const Tensor& grid,
                                          const Tensor& gx, const Tensor& gg, const gs::Params& p);
TS_DECLARE_STUB(GridSampleKernel, grid_sample_stub);
TS_DECLARE_STUB(GridSampleBackwardKernel, grid_sample_backward_stub);

}  // namespace ts

namespace ts::nn {

// Sampling grids for batches of affine maps: theta (N, 2, 3) with size (N, C, H, W) ->
// (N, H, W, 2), or theta (N, 3, 4) with size (N, C, D, H, W) -> (N, D, H, W, 3).
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners);

// Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo) (5-D: grid
// (N, Do, Ho, Wo, 3)); grid[..., 0] is x (width), in [-1, 1]. mode bilinear, nearest or
// bicubic (4-D only); padding_mode zeros, border or reflection. Differentiable in the input
// and the grid, to every order (Note [Native grid sampling]).
Tensor grid_sample(const Tensor& input, const Tensor& grid, const std::string& mode,
                   const std::string& padding_mode, bool align_corners);

// The kernels' per-image geometry of input x (N, C, *in) and grid (N, *out, K).
gs::Geom grid_sample_geom(const Tensor& x, const Tensor& grid);

}  // namespace ts::nn
