// Fused nn kernels that measurement showed hot on CPU training (softmax, layer norm, GELU,
// convolution's im2col/col2im, max pooling): each replaces a chain of elementwise ops and
// temporaries with one pass. They compute values only; tessera/nn/functional wraps them in
// autograd Functions whose backward calls the *_backward ops here (and falls back to
// differentiable compositions of tessera ops when a graph of the backward is recorded).
// Every op takes and returns float16/bfloat16/float32/float64 tensors of one dtype; CPU
// kernels in cpu/nn_norm_kernels.cpp, cpu/nn_act_kernels.cpp, cpu/nn_window_kernels.cpp,
// cpu/nn_loss_kernels.cpp; CUDA kernels in cuda/nn_{softmax,norm,act,loss}_kernels.cu.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// Geometry of a 2-D sliding window (1-D windows are 2-D ones with a height-1 kernel).
struct Window2d {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t out_h(int64_t h) const { return out_size(h, kh, sh, ph, dh); }
  int64_t out_w(int64_t w) const { return out_size(w, kw, sw, pw, dw); }
  // (in + 2 p - d (k - 1) - 1) / s + 1, checked (Note [Checked size arithmetic]): kernel,
  // padding and dilation come from the user.
  static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
    const char* op = "sliding window";
    TS_CHECK(s > 0, ValueError, op, ": stride must be positive, got ", s);
    const int64_t span = checked_mul(d, checked_add(k, -1, op), op);
    const int64_t padded = checked_add(in, checked_mul(2, p, op), op);
    return (padded - 1 - span) / s + 1;
  }
};

// Kernels see contiguous tensors; rows x n for the row-wise ones.
using SoftmaxKernel = void (*)(const Tensor& x, const Tensor& out, int64_t rows, int64_t n,
                               bool log);
using SoftmaxBackwardKernel = void (*)(const Tensor& y, const Tensor& gy, const Tensor& gx,
                                       int64_t rows, int64_t n, bool log);
// Attention's softmax(scale * x) over rows of n. With `causal`, row r is query r % L and sees
// keys j <= r % L: the kernels read only those and give the others 0, writing entries up to
// roundup(r % L + 1, block) (all n when block is 0) and leaving the rest as they were. The
// backward is scale * softmax's, with the same reads and writes: a gy whose entries past a
// row's visible keys were never computed (Note [Causal block attention]) cannot leak garbage
// into the row sums.
struct AttentionRows {
  int64_t L = 1;
  double scale = 1;
  bool causal = false;
  int64_t block = 0;
};
using AttentionSoftmaxKernel = void (*)(const Tensor& x, const Tensor& out, int64_t rows, int64_t n,
                                        const AttentionRows& geom);
using AttentionSoftmaxBackwardKernel = void (*)(const Tensor& y, const Tensor& gy, const Tensor& gx,
                                                int64_t rows, int64_t n, const AttentionRows& geom);
// Cross entropy over logits x (rows, C) with int64 targets (rows,) and class weights w (C,)
// or null: loss and row_weight (rows,) in x's dtype, lse (rows,) in the compute type.
// Targets outside [0, C) other than ignore_index: the CPU op rejects them before the kernel;
// CUDA kernels clamp them and report a deferred device error (cuda/device_error.h).
struct CrossEntropyOpts {
  int64_t ignore_index = -100;
  double label_smoothing = 0;
};
using CrossEntropyKernel = void (*)(const Tensor& x, const Tensor& target, const Tensor* w,
                                    const Tensor& loss, const Tensor& lse, const Tensor& row_weight,
                                    int64_t rows, int64_t C, const CrossEntropyOpts& o);
// gx (rows, C) from the per-row loss gradient g (rows,) and the forward's lse.
using CrossEntropyBackwardKernel = void (*)(const Tensor& g, const Tensor& x, const Tensor& target,
                                            const Tensor* w, const Tensor& lse, const Tensor& gx,
                                            int64_t rows, int64_t C, const CrossEntropyOpts& o);
// mean/rstd: (rows,) in the compute type of x (float for 16-bit x).
using LayerNormKernel = void (*)(const Tensor& x, const Tensor* w, const Tensor* b, double eps,
                                 const Tensor& y, const Tensor& mean, const Tensor& rstd,
                                 int64_t rows, int64_t n);
using LayerNormBackwardKernel = void (*)(const Tensor& gy, const Tensor& x, const Tensor& mean,
                                         const Tensor& rstd, const Tensor* w, const Tensor& gx,
                                         const Tensor* gw, const Tensor* gb, int64_t rows,
                                         int64_t n);
using GeluKernel = void (*)(const Tensor& x, const Tensor& out, bool tanh_approx);
using GeluBackwardKernel = void (*)(const Tensor& x, const Tensor& gy, const Tensor& gx,
                                    bool tanh_approx);
using ReluBackwardKernel = void (*)(const Tensor& y, const Tensor& gy, const Tensor& gx);
// x (N, C, H, W) -> cols (N, C*kh*kw, Ho*Wo) and back (col2im sums overlapping windows).
using Im2colKernel = void (*)(const Tensor& x, const Tensor& cols, const Window2d& win);
using Col2imKernel = void (*)(const Tensor& cols, const Tensor& x, const Window2d& win);
// Convolution (groups == 1, float32/float64): x (N, C, H, W), w (O, C, kh, kw) -> y (N, O,
// Ho, Wo); b (O,) or null. The backward writes each non-null gradient (gx of x's shape).
using Conv2dKernel = void (*)(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& y,
                              const Window2d& win);
using Conv2dBackwardKernel = void (*)(const Tensor& g, const Tensor& x, const Tensor& w,
                                      const Tensor* gx, const Tensor* gw, const Tensor* gb,
                                      const Window2d& win);
// x (N, C, H, W) -> y, idx (N, C, Ho, Wo); idx is the flat h * W + w of each max (-inf pad).
using MaxPoolKernel = void (*)(const Tensor& x, const Tensor& y, const Tensor& idx,
                               const Window2d& win);
using MaxPoolBackwardKernel = void (*)(const Tensor& gy, const Tensor& idx, const Tensor& gx);

TS_DECLARE_STUB(SoftmaxKernel, softmax_stub);
TS_DECLARE_STUB(SoftmaxBackwardKernel, softmax_backward_stub);
TS_DECLARE_STUB(AttentionSoftmaxKernel, attention_softmax_stub);
TS_DECLARE_STUB(AttentionSoftmaxBackwardKernel, attention_softmax_backward_stub);
TS_DECLARE_STUB(CrossEntropyKernel, cross_entropy_stub);
TS_DECLARE_STUB(CrossEntropyBackwardKernel, cross_entropy_backward_stub);
TS_DECLARE_STUB(LayerNormKernel, layer_norm_stub);
TS_DECLARE_STUB(LayerNormBackwardKernel, layer_norm_backward_stub);
TS_DECLARE_STUB(GeluKernel, gelu_stub);
TS_DECLARE_STUB(GeluBackwardKernel, gelu_backward_stub);
TS_DECLARE_STUB(ReluBackwardKernel, relu_backward_stub);
TS_DECLARE_STUB(Im2colKernel, im2col_stub);
TS_DECLARE_STUB(Col2imKernel, col2im_stub);
TS_DECLARE_STUB(Conv2dKernel, conv2d_stub);
TS_DECLARE_STUB(Conv2dBackwardKernel, conv2d_backward_stub);
TS_DECLARE_STUB(MaxPoolKernel, max_pool_stub);
TS_DECLARE_STUB(MaxPoolBackwardKernel, max_pool_backward_stub);

// softmax (log_softmax when `log`) over the last axis.
Tensor softmax_last(const Tensor& x, bool log);
// The input gradient from the output y and its gradient gy.
Tensor softmax_last_backward(const Tensor& y, const Tensor& gy, bool log);

// softmax(scale * scores) over the last axis of scores (..., L, S); with `causal`, query i
// sees keys j <= i (PyTorch's is_causal: tril(ones(L, S))), without materializing a mask.
Tensor attention_softmax(const Tensor& scores, double scale, bool causal, int64_t block = 0);
// scale * softmax_backward(y, gy): masked entries (y == 0) get 0.
Tensor attention_softmax_backward(const Tensor& y, const Tensor& gy, double scale,
                                  bool causal = false, int64_t block = 0);

// Cross entropy with class indices: logits (rows, C) float, target (rows,) int64, weight (C,)
// of the logits' dtype or undefined. Per row n with t = target[n] (PyTorch's formula):
//   loss[n] = (1 - eps) * w[t] * (lse - x[t]) + eps / C * sum_c w[c] * (lse - x[c]),
// 0 where t == ignore_index. Returns (loss, lse, row_weight): loss and row_weight = w[t]
// (0 where ignored; the 'mean' reduction divides by its sum) in the logits' dtype, lse in
// float (float64 for float64 logits). `loss_dtype` float32 with bfloat16/float16 logits on
// CUDA (Note [Cross entropy on 16-bit logits]): the kernels read the 16-bit logits, compute
// and return the loss in float32, and the backward writes the gradient in the logits' dtype.
std::tuple<Tensor, Tensor, Tensor> cross_entropy_forward(
    const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
    double label_smoothing, std::optional<DType> loss_dtype = std::nullopt);
// Grad logits (rows, C), in the logits' dtype, from the per-row loss gradient g (rows,; the
// loss's dtype) and the forward's lse.
Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& target,
                              const Tensor& weight, const Tensor& lse, int64_t ignore_index,
                              double label_smoothing);

// Normalizes over the trailing `n` elements (n = prod(normalized_shape)); w, b of n elements
// or undefined. Returns y, mean and rstd = 1/sqrt(var + eps) per row.
std::tuple<Tensor, Tensor, Tensor> layer_norm_forward(const Tensor& x, int64_t n, const Tensor& w,
                                                      const Tensor& b, double eps);
// Returns gx, gw, gb (gw/gb undefined when w/b are).
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& gy, const Tensor& x,
                                                       const Tensor& mean, const Tensor& rstd,
                                                       const Tensor& w, bool has_bias);

Tensor gelu(const Tensor& x, bool tanh_approx);
Tensor gelu_backward(const Tensor& x, const Tensor& gy, bool tanh_approx);
// ReLU's input gradient from its output y: gy where y > 0 (or NaN, as PyTorch passes), else 0.
Tensor relu_backward(const Tensor& y, const Tensor& gy);

Tensor im2col(const Tensor& x, const Window2d& win);
// cols (N, C*kh*kw, Ho*Wo) -> (N, C, h, w).
Tensor col2im(const Tensor& cols, int64_t channels, int64_t h, int64_t w, const Window2d& win);

// Convolution with groups == 1 for float32/float64 x (N, C, H, W) and w (O, C, kh, kw), b (O,)
// or undefined (zero padding): y (N, O, Ho, Wo).
Tensor conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Window2d& win);
// (gx, gw, gb) from the output gradient, each undefined unless asked for.
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& g, const Tensor& x,
                                                   const Tensor& w, const Window2d& win,
                                                   bool need_x, bool need_w, bool need_b);

// Output height/width given explicitly (ceil_mode is the caller's rule); windows reaching
// past the padded input only see what is inside. Returns (y, int64 indices).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const Window2d& win,
                                                   int64_t out_h, int64_t out_w);
// gx (N, C, h, w) with gy scattered (summed) to the recorded indices.
Tensor max_pool2d_backward(const Tensor& gy, const Tensor& idx, int64_t h, int64_t w);

}  // namespace ts
