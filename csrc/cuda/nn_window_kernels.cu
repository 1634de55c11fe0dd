// CUDA kernels of the sliding-window ops (ops/nn_fused.h): im2col/col2im for convolution and
// transposed convolution, max pooling with PyTorch's flat per-plane indices and its backward.
// They follow the CPU kernels (cpu/nn_window_kernels.cpp) tap for tap: col2im gathers each
// input pixel's taps in the CPU's order (so its sums are the CPU's bit for bit, and no
// atomics are needed), max pooling takes the first maximum and the last NaN.
#include "cuda/device_error.h"
#include "cuda/loops.cuh"
#include "ops/nn_fused.h"
#include "kernels/window_math.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

struct Geom {
  int64_t H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
};

Geom geom(int64_t H, int64_t W, int64_t Ho, int64_t Wo, const Window2d& w) {
  return {H, W, Ho, Wo, w.kh, w.kw, w.sh, w.sw, w.ph, w.pw, w.dh, w.dw};
}

// One thread per column element (plane, tap, output position); zero where the tap is padding.
template <class T>
__global__ void im2col_kernel(const T* x, T* cols, Geom g, int64_t total) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t L = g.Ho * g.Wo, K = g.kh * g.kw;
  const int64_t l = i % L, k = (i / L) % K, p = i / (L * K);
  const int64_t ih = (l / g.Wo) * g.sh - g.ph + (k / g.kw) * g.dh;
  const int64_t iw = (l % g.Wo) * g.sw - g.pw + (k % g.kw) * g.dw;
  const bool in = ih >= 0 && ih < g.H && iw >= 0 && iw < g.W;
  cols[i] = in ? x[(p * g.H + ih) * g.W + iw] : T(0.0f);
}

// One thread per input pixel: the sum of the column entries that read it, taps in order.
template <class T>
__global__ void col2im_kernel(const T* cols, T* x, Geom g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t L = g.Ho * g.Wo, K = g.kh * g.kw;
  const int64_t w = i % g.W, h = (i / g.W) % g.H, p = i / (g.W * g.H);
  const T* src = cols + p * K * L;
  A acc = A(0);
  for (int64_t ki = 0; ki < g.kh; ++ki) {
    const int64_t th = h + g.ph - ki * g.dh;  // = oh * sh for the output row that reads h
    if (th < 0 || th % g.sh != 0 || th / g.sh >= g.Ho) continue;
    for (int64_t kj = 0; kj < g.kw; ++kj) {
      const int64_t tw = w + g.pw - kj * g.dw;
      if (tw < 0 || tw % g.sw != 0 || tw / g.sw >= g.Wo) continue;
      acc += A(src[(ki * g.kw + kj) * L + (th / g.sh) * g.Wo + tw / g.sw]);
    }
  }
  x[i] = T(acc);
}

// One thread per output: -inf padding, windows clipped to the input, the first maximum wins
// and a NaN wins over everything (the last NaN's index), as on the CPU.
template <class T>
__global__ void max_pool_kernel(const T* x, T* y, int64_t* idx, Geom g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t ow = i % g.Wo, oh = (i / g.Wo) % g.Ho, p = i / (g.Wo * g.Ho);
  const int64_t hs = oh * g.sh - g.ph, ws = ow * g.sw - g.pw;
  const int64_t h1 = window_end(hs, (g.kh - 1) * g.dh + 1, g.H),
                w1 = window_end(ws, (g.kw - 1) * g.dw + 1, g.W);
  const int64_t h0 = window_first_tap(hs, g.dh), w0 = window_first_tap(ws, g.dw);
  const T* xs = x + p * g.H * g.W;
  A best = -INFINITY;
  int64_t at = h0 * g.W + w0;
  for (int64_t ih = h0; ih < h1; ih += g.dh)
    for (int64_t iw = w0; iw < w1; iw += g.dw) {
      const A v = A(xs[ih * g.W + iw]);
      if (v > best || v != v) {
        best = v;
        at = ih * g.W + iw;
      }
    }
  y[i] = T(best);
  idx[i] = at;
}

// Scatters each output gradient to its recorded input position (atomic: windows overlap when
// the stride is below the kernel size). Indices outside the plane are reported (Note [Deferred
// device errors]) and skipped.
template <class T>
__global__ void max_pool_backward_kernel(const T* gy, const int64_t* idx, T* gx, int64_t L,
                                         int64_t HW, int64_t total, DeviceErrorSlot* slot,
                                         unsigned* claim, int32_t code) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t at = idx[i];
  if (at < 0 || at >= HW) {
    report_device_error(slot, claim, code, at, 0, HW);
    return;
  }
  atomicAdd(gx + (i / L) * HW + at, gy[i]);
}

void im2col_cuda(const Tensor& x, const Tensor& cols, const Window2d& w) {
  const int64_t H = x.dim(2), W = x.dim(3);
  const Geom g = geom(H, W, w.out_h(H), w.out_w(W), w);
  const int64_t total = cols.numel();
  cuda_visit<kFloatSet>(x.dtype(), "im2col", [&](auto tag) {
    using T = typename decltype(tag)::type;
    im2col_kernel<T><<<blocks(total), kThreads, 0, current_stream(x.device())>>>(
        x.data<T>(), cols.data<T>(), g, total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void col2im_cuda(const Tensor& cols, const Tensor& x, const Window2d& w) {
  const int64_t H = x.dim(2), W = x.dim(3);
  const Geom g = geom(H, W, w.out_h(H), w.out_w(W), w);
  const int64_t total = x.numel();
  cuda_visit<kFloatSet>(x.dtype(), "col2im", [&](auto tag) {
    using T = typename decltype(tag)::type;
    col2im_kernel<T><<<blocks(total), kThreads, 0, current_stream(x.device())>>>(
        cols.data<T>(), x.data<T>(), g, total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void max_pool_cuda(const Tensor& x, const Tensor& y, const Tensor& idx, const Window2d& w) {
  const Geom g = geom(x.dim(2), x.dim(3), y.dim(2), y.dim(3), w);
  const int64_t total = y.numel();
  cuda_visit<kFloatSet>(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_kernel<T><<<blocks(total), kThreads, 0, current_stream(x.device())>>>(
        x.data<T>(), y.data<T>(), idx.data<int64_t>(), g, total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void max_pool_backward_cuda(const Tensor& gy, const Tensor& idx, const Tensor& gx) {
  static const int32_t code = device_error_code("max_pool2d_backward", "index");
  const int64_t total = gy.numel(), L = gy.dim(2) * gy.dim(3), HW = gx.dim(2) * gx.dim(3);
  const int dev = gx.device().index;
  cuda_visit<kFloatSet>(gx.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_backward_kernel<T><<<blocks(total), kThreads, 0, current_stream(dev)>>>(
        gy.data<T>(), idx.data<int64_t>(), gx.data<T>(), L, HW, total, device_error_slot(dev),
        device_error_claim(dev), code);
  });
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

TS_REGISTER_KERNEL(im2col_stub, CUDA, &im2col_cuda);
TS_REGISTER_KERNEL(col2im_stub, CUDA, &col2im_cuda);
TS_REGISTER_KERNEL(max_pool_stub, CUDA, &max_pool_cuda);
TS_REGISTER_KERNEL(max_pool_backward_stub, CUDA, &max_pool_backward_cuda);

}  // namespace ts::cuda
