// PyTorch's F.pad as a C++ op: constant, reflect, replicate and circular padding of the
// trailing dims, negative pads cropping. Note [Pad kernels]: reflect, replicate and circular
// padding of 1-3 dims on the CPU is one gather, out[b, i, j, l] = x[b, D[i], H[j], W[l]], by a
// source map per padded dim (PadMaps); its backward adds each output gradient back at its
// source (pad_backward), and each of the two records the other as its formula, so gradients
// of every order stay PyTorch's. The rest (constant mode, CUDA) is a composition of recorded
// ops (slices, flips, broadcasts, index_select, concat).
#pragma once
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts::nn {

// `pad` lists (left, right) pairs starting from the LAST dim (at most x.ndim() pairs); value
// fills constant padding. ValueError naming pad for a pad that does not fit or an unknown mode.
Tensor pad(const Tensor& x, const Shape& pad, const std::string& mode, const Scalar& value);

// The last three dims of x as (D, H, W) over `batch` rows of D * H * W elements, and for each
// the source index of every output position (a dim that is not padded maps to itself).
struct PadMaps {
  int64_t batch = 1;
  int64_t in[3] = {1, 1, 1};
  std::vector<int64_t> map[3];
};

// out = the gather of contiguous x by m; gx (zeroed by the kernel) = the sum of contiguous gy
// at the sources.
using PadKernel = void (*)(const Tensor& x, const Tensor& out, const PadMaps& m);
using PadBackwardKernel = void (*)(const Tensor& gy, const Tensor& gx, const PadMaps& m);
TS_DECLARE_STUB(PadKernel, pad_stub);
TS_DECLARE_STUB(PadBackwardKernel, pad_backward_stub);

}  // namespace ts::nn
