// Convolutions (1-D, 2-D, 3-D; transposed; grouped, depthwise) as ops with C++ gradients.
// Note [Convolution as three ops]
// Every convolution is one of three bilinear maps over one geometry (ConvSpec: the spatial
// size of the "wide" side, kernel, stride, padding, dilation, groups):
//   conv_forward     y  = conv(x, w)          x (N, C, *in) -> y (N, O, *out)
//   conv_transpose   x' = conv^T(y, w)        y (N, O, *out) -> x' (N, C, *in)
//   conv_weight      gw = dconv/dw (gy, x)    -> (O, C/groups, *k)
// The gradient of each is written with the other two (formulas.cpp), so gradients of any
// order are recorded through the same kernels. PyTorch's conv_transpose with weight
// (C_in, C_out/groups, *k) is conv^T of the convolution that maps C_out -> C_in.
// CPU kernels (cpu/conv_kernels.cpp): im2col/col2im in cache-sized chunks of images around
// one BLAS GEMM per chunk and group, a direct kernel for depthwise convolutions; float16 and
// bfloat16 compute in float32.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

struct ConvSpec {
  int nsp = 2;         // spatial dims, 1..3
  int64_t groups = 1;  // channel groups
  // Per spatial dim, stored right-aligned in 3 slots (a 2-D spec has slot 0 = 1 / 0).
  std::array<int64_t, 3> in{1, 1, 1};   // the wide side's size (conv's input)
  std::array<int64_t, 3> k{1, 1, 1};    // kernel
  std::array<int64_t, 3> s{1, 1, 1};    // stride
  std::array<int64_t, 3> p{0, 0, 0};    // symmetric zero padding
  std::array<int64_t, 3> d{1, 1, 1};    // dilation
  // The narrow side's size: conv's output size, or (conv_transpose with an output_padding
  // of at least the stride) the transposed input's, smaller than what the formula gives.
  std::array<int64_t, 3> o{1, 1, 1};
  int64_t out(int i) const { return o[i]; }
  int64_t out_formula(int i) const {
    return (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  }
  void set_out() {
    for (int i = 0; i < 3; ++i) o[i] = out_formula(i);
  }
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out(0) * out(1) * out(2); }
  int64_t k_numel() const { return k[0] * k[1] * k[2]; }
  Shape in_shape() const;   // the nsp real sizes
  Shape out_shape() const;
  Shape k_shape() const;
  // attrs encoding for autograd nodes, and back.
  Shape encode() const;
  static ConvSpec decode(const Shape& a);
};

// Kernels see tensors (N, C, *in), (O, C/groups, *k), (N, O, *out): contiguous float32/float64
// on the CPU; on CUDA also float16/bfloat16 (the tensor cores take them as they are), and all
// three either contiguous or all channels-last (Note [Channels-last convolutions on CUDA]).
using ConvForwardKernel = void (*)(const Tensor& x, const Tensor& w, const Tensor* b,
                                   const Tensor& y, const ConvSpec& s);
using ConvTransposeKernel = void (*)(const Tensor& gy, const Tensor& w, const Tensor& gx,
                                     const ConvSpec& s);
using ConvWeightKernel = void (*)(const Tensor& gy, const Tensor& x, const Tensor& gw,
                                  const ConvSpec& s);
TS_DECLARE_STUB(ConvForwardKernel, conv_forward_stub);
TS_DECLARE_STUB(ConvTransposeKernel, conv_transpose_stub);
TS_DECLARE_STUB(ConvWeightKernel, conv_weight_stub);

// ts.backends.cudnn's switches, as in PyTorch; they steer the CUDA convolutions (cuDNN when
// `enabled` and the library loads, else the GEMM path; `allow_tf32` lets float32 use TF32 on
// either path; `benchmark` times the candidate engines once per shape; `deterministic` keeps
// only engines without atomics).
struct CudnnFlags {
  bool enabled = true, benchmark = false, deterministic = false, allow_tf32 = true;
};
CudnnFlags& cudnn_flags();
// What ran the calling thread's last convolution kernel: "cpu", "cudnn", "cuda_gemm" or
// "cuda_depthwise" (ts.backends.cudnn.last_conv_path()).
const char*& conv_path_used();
// The cuDNN loader (cuda/cudnn_conv.cpp sets `version` in CUDA builds): the loaded library's
// version, 0 when it cannot be loaded (or the build has no CUDA); `search_paths` are tried
// (before the loader's default search) for libcudnn.so.9.
struct CudnnLoader {
  int64_t (*version)() = nullptr;
  std::string load_error;
  std::vector<std::string> search_paths;
};
CudnnLoader& cudnn_loader();

// The three recorded ops (Note [Convolution as three ops]); b may be undefined.
Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& b, const ConvSpec& s);
Tensor conv_transpose_op(const Tensor& y, const Tensor& w, const Tensor& b, const ConvSpec& s);
Tensor conv_weight(const Tensor& gy, const Tensor& x, const Shape& w_shape, const ConvSpec& s);

// PyTorch's F.conv{1,2,3}d: x (N, C, *in) or unbatched (C, *in), w (O, C/groups, *k), b (O,)
// or undefined. padding: one int per dim, or padding_mode "same"/"valid" via `pad_str`
// (empty for ints). `op` names the function in errors.
Tensor convolution(const Tensor& x, const Tensor& w, const Tensor& b, const Shape& stride,
                   const Shape& padding, const std::string& pad_str, const Shape& dilation,
                   int64_t groups, int nsp, const char* op);
// PyTorch's F.conv_transpose{1,2,3}d: x (N, C_in, *in), w (C_in, C_out/groups, *k).
Tensor convolution_transpose(const Tensor& x, const Tensor& w, const Tensor& b, const Shape& stride,
                             const Shape& padding, const Shape& output_padding, int64_t groups,
                             const Shape& dilation, int nsp, const char* op);

}  // namespace ts
