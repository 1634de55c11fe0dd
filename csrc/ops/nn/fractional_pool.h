// fractional_max_pool2d / fractional_max_pool3d (PyTorch's F.fractional_max_pool{2,3}d): max
// pooling over pseudo-random windows (Graham's fractional max-pooling) with PyTorch's window
// sequence, so the same samples give the same windows, values and indices.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts::nn {

// x (N, C, *spatial) or (C, *spatial) with nsp = 2 or 3 spatial dims, floating. kernel: nsp
// sizes; out: nsp output sizes (each > 0, out + kernel - 1 <= input size in 2-D, < in 3-D as
// PyTorch's). samples (N, C, nsp)
// in [0, 1) fix the windows (PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D); drawn
// from the default generator when absent. Returns (values, int64 flat indices into each
// plane). The window starts are computed on the host from the samples (PyTorch's
// generate_intervals in the input's float type); the values are a gather of x at the chosen
// indices (recorded take_along_axis), so the gradient scatters into exactly those positions.
std::pair<Tensor, Tensor> fractional_max_pool(const Tensor& x, int nsp, const Shape& kernel,
                                              const Shape& out,
                                              const std::optional<Tensor>& samples, const char* op);

// The windows of every plane as 3-D ones (a 2-D pool has depth 1): starts holds, per plane,
// out[0] + out[1] + out[2] window starts, dim by dim.
struct FractionalWindows {
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  std::vector<int64_t> starts;
};
// ind (planes, out[0] * out[1] * out[2]) int64 = the flat in-plane index of each window's max
// in contiguous x, PyTorch's rule: the first maximum, or the last NaN.
using FractionalMaxIndexKernel = void (*)(const Tensor& x, const Tensor& ind,
                                          const FractionalWindows& w);
TS_DECLARE_STUB(FractionalMaxIndexKernel, fractional_max_index_stub);

}  // namespace ts::nn
