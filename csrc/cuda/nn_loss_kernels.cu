// CUDA kernels of the fused cross entropy (ops/nn_fused.h), forward and backward, with the CPU
// kernels' formulas (cpu/nn_loss_kernels.cpp). A row of C logits gets a warp (C <= 2048,
// several rows per block) or a block, which reads it from global memory in strided passes
// (max, then the exponential sums); the backward writes each class's gradient in one pass.
// Targets outside [0, C) other than ignore_index are never checked on the host (that would
// synchronize): the kernels clamp them and report a deferred device error, raised as an
// IndexError at the next synchronization (Note [Deferred device errors], cuda/device_error.h).
#include <algorithm>
#include <type_traits>

#include "cuda/device_error.h"
#include "cuda/nn_rows.cuh"
#include "ops/nn_fused.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

using namespace rows;

constexpr int64_t kMaxWarpClasses = 2048;

struct CeArgs {
  int64_t ignore_index;
  double eps;  // label smoothing
  DeviceErrorSlot* slot;
  unsigned* claim;
  int32_t code;
};

// G threads share a row: a warp (threadIdx.x is the lane) or the whole 1-D block.
template <int G, class A, class Op>
__device__ __forceinline__ A group_allreduce(A v, Op op) {
  if constexpr (G == 32)
    return warp_allreduce(v, op);
  else
    return block_allreduce(v, op);
}

// The row's target, or -1 when ignored; a bad one is reported (by thread 0) and clamped.
__device__ __forceinline__ int64_t row_target(const int64_t* target, int64_t r, int64_t C,
                                              const CeArgs& a) {
  const int64_t t = target[r];
  if (t == a.ignore_index) return -1;
  if (t >= 0 && t < C) return t;
  if (threadIdx.x == 0) report_device_error(a.slot, a.claim, a.code, t, 0, C);
  return C > 0 ? ::min(::max(t, int64_t(0)), C - 1) : -1;
}

// X: the logits' type; T: the loss's (float32 for 16-bit logits under autocast, Note [Cross
// entropy on 16-bit logits]); the arithmetic is in T's accumulation type either way.
template <class X, class T, int G>
__device__ __forceinline__ void ce_row(const X* __restrict__ x, const int64_t* __restrict__ target,
                                       const T* __restrict__ w, T* __restrict__ loss,
                                       dacc_t<T>* __restrict__ lse, T* __restrict__ row_weight,
                                       int64_t r, int64_t C, const CeArgs& a) {
  using A = dacc_t<T>;
  const X* xr = x + r * C;
  const int tid = threadIdx.x;
  A m = MaxOp<A>::identity();
  for (int64_t i = tid; i < C; i += G) m = MaxOp<A>()(m, dconvert<A>(xr[i]));
  m = group_allreduce<G>(m, MaxOp<A>());
  const bool smooth = a.eps > 0;
  A sum = 0, wx = 0, wsum = 0;  // sum exp(x - m), sum_c w_c x_c, sum_c w_c
  for (int64_t i = tid; i < C; i += G) {
    const A xi = dconvert<A>(xr[i]);
    sum += ::cuda::std::exp(xi - m);
    if (smooth) {
      const A wi = w ? dconvert<A>(w[i]) : A(1);
      wx += wi * xi;
      wsum += wi;
    }
  }
  sum = group_allreduce<G>(sum, SumOp<A>());
  if (smooth) {
    wx = group_allreduce<G>(wx, SumOp<A>());
    wsum = group_allreduce<G>(wsum, SumOp<A>());
  }
  const int64_t t = row_target(target, r, C, a);
  if (tid != 0) return;
  const A s = m + ::cuda::std::log(sum);
  lse[r] = s;
  if (t < 0) {
    const bool bad = target[r] != a.ignore_index;  // C == 0: no class to clamp to
    loss[r] = dconvert<T>(bad ? ::cuda::std::numeric_limits<A>::quiet_NaN() : A(0));
    row_weight[r] = dconvert<T>(A(0));
    return;
  }
  const A wt = w ? dconvert<A>(w[t]) : A(1);
  A l = wt * (s - dconvert<A>(xr[t]));
  if (smooth) l = (A(1) - A(a.eps)) * l + A(a.eps) / A(C) * (s * wsum - wx);
  loss[r] = dconvert<T>(l);
  row_weight[r] = dconvert<T>(wt);
}

template <class X, class T, int G>
__global__ void __launch_bounds__(G == 32 ? 32 * kWarpRows : G)
    ce_forward(const X* __restrict__ x, const int64_t* __restrict__ target, const T* __restrict__ w,
               T* __restrict__ loss, dacc_t<T>* __restrict__ lse, T* __restrict__ row_weight,
               int64_t nrows, int64_t C, CeArgs a) {
  if constexpr (G == 32) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
    if (r < nrows) ce_row<X, T, G>(x, target, w, loss, lse, row_weight, r, C, a);
  } else {
    for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x)
      ce_row<X, T, G>(x, target, w, loss, lse, row_weight, r, C, a);
  }
}

// d loss / d x_c = g ((1 - eps) w_t (p_c - [c == t]) + eps / C (sum(w) p_c - w_c)).
template <class X, class T, int G>
__device__ __forceinline__ void ce_backward_row(const T* __restrict__ g, const X* __restrict__ x,
                                                const int64_t* __restrict__ target,
                                                const T* __restrict__ w,
                                                const dacc_t<T>* __restrict__ lse,
                                                X* __restrict__ gx, int64_t r, int64_t C,
                                                const CeArgs& a) {
  using A = dacc_t<T>;
  const int tid = threadIdx.x;
  X* out = gx + r * C;
  const int64_t t = row_target(target, r, C, a);
  if (t < 0) {  // the same for the whole group
    for (int64_t i = tid; i < C; i += G) out[i] = dconvert<X>(A(0));
    return;
  }
  const A eps = A(a.eps);
  A wsum = A(C);
  if (a.eps > 0 && w) {
    wsum = 0;
    for (int64_t i = tid; i < C; i += G) wsum += dconvert<A>(w[i]);
    wsum = group_allreduce<G>(wsum, SumOp<A>());
  }
  const X* xr = x + r * C;
  const A gr = dconvert<A>(g[r]), s = lse[r];
  const A wt = w ? dconvert<A>(w[t]) : A(1);
  const A nll = gr * (A(1) - eps) * wt;  // the target term's factor
  const A sm = gr * eps / A(C);          // the smoothing term's factor
  const A pcoef = nll + sm * wsum;
  for (int64_t i = tid; i < C; i += G) {
    A v = pcoef * ::cuda::std::exp(dconvert<A>(xr[i]) - s);
    if (a.eps > 0) v -= sm * (w ? dconvert<A>(w[i]) : A(1));
    if (i == t) v -= nll;
    out[i] = dconvert<X>(v);
  }
}

template <class X, class T, int G>
__global__ void __launch_bounds__(G == 32 ? 32 * kWarpRows : G)
    ce_backward(const T* __restrict__ g, const X* __restrict__ x,
                const int64_t* __restrict__ target, const T* __restrict__ w,
                const dacc_t<T>* __restrict__ lse, X* __restrict__ gx, int64_t nrows, int64_t C,
                CeArgs a) {
  if constexpr (G == 32) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
    if (r < nrows) ce_backward_row<X, T, G>(g, x, target, w, lse, gx, r, C, a);
  } else {
    for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x)
      ce_backward_row<X, T, G>(g, x, target, w, lse, gx, r, C, a);
  }
}

CeArgs ce_args(const CrossEntropyOpts& o, int dev) {
  static const int32_t code = device_error_code("cross_entropy", "target");
  return CeArgs{o.ignore_index, o.label_smoothing, device_error_slot(dev), device_error_claim(dev),
                code};
}

// Launches kernel<T, 32> (a warp per row) or kernel<T, kRowBlock> (a block per row).
template <class WarpK, class BlockK, class... Args>
void launch_rows(WarpK warp_k, BlockK block_k, int64_t nrows, int64_t C, cudaStream_t st,
                 Args... args) {
  if (C <= kMaxWarpClasses)
    warp_k<<<warp_row_blocks(nrows), dim3(32, kWarpRows), 0, st>>>(args...);
  else
    block_k<<<row_block_grid(nrows), kRowBlock, 0, st>>>(args...);
  TS_CUDA_CHECK_LAUNCH();
}

// Calls f(X-tag) with the logits' type: T itself, or a 16-bit type read by float32 kernels.
template <class T, class F>
void visit_logits(DType x, F&& f) {
  if constexpr (std::is_same_v<T, float>) {
    if (x == DType::BFloat16) return f(DTag<__nv_bfloat16>{});
    if (x == DType::Float16) return f(DTag<__half>{});
  }
  f(DTag<T>{});
}

void cross_entropy_cuda(const Tensor& x, const Tensor& target, const Tensor* w, const Tensor& loss,
                        const Tensor& lse, const Tensor& row_weight, int64_t nrows, int64_t C,
                        const CrossEntropyOpts& o) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const CeArgs a = ce_args(o, dev);
  cuda_visit<kFloatSet>(loss.dtype(), "cross_entropy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    visit_logits<T>(x.dtype(), [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      launch_rows(ce_forward<X, T, 32>, ce_forward<X, T, kRowBlock>, nrows, C,
                  current_stream(dev), cptr<X>(&x), cptr<int64_t>(&target), cptr<T>(w),
                  reinterpret_cast<T*>(loss.data_ptr()), reinterpret_cast<A*>(lse.data_ptr()),
                  reinterpret_cast<T*>(row_weight.data_ptr()), nrows, C, a);
    });
  });
}

void cross_entropy_backward_cuda(const Tensor& g, const Tensor& x, const Tensor& target,
                                 const Tensor* w, const Tensor& lse, const Tensor& gx,
                                 int64_t nrows, int64_t C, const CrossEntropyOpts& o) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const CeArgs a = ce_args(o, dev);
  cuda_visit<kFloatSet>(g.dtype(), "cross_entropy_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    visit_logits<T>(x.dtype(), [&](auto xtag) {
      using X = typename decltype(xtag)::type;
      launch_rows(ce_backward<X, T, 32>, ce_backward<X, T, kRowBlock>, nrows, C,
                  current_stream(dev), cptr<T>(&g), cptr<X>(&x), cptr<int64_t>(&target),
                  cptr<T>(w), reinterpret_cast<const A*>(lse.data_ptr()),
                  reinterpret_cast<X*>(gx.data_ptr()), nrows, C, a);
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(cross_entropy_stub, CUDA, &cross_entropy_cuda);
TS_REGISTER_KERNEL(cross_entropy_backward_stub, CUDA, &cross_entropy_backward_cuda);

}  // namespace ts::cuda
