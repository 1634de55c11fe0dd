// CUDA kernels of batch normalization (ops/batch_norm.h) over (N, C, L), contiguous or
// channels-last ((N, L, C) in memory: x, y, gy and gx share the layout), with the
// CPU kernels' arithmetic (cpu/batch_norm_kernels.cpp) in the accumulate type (float for 16-bit
// and float32 inputs, double for float64).
// Note [CUDA batch-norm reductions]: a channel's N*L values are split over S blocks (enough
// blocks to fill the GPU when C is small, one when it is large; channels-last blocks take 32
// neighbouring channels, so a warp reads a contiguous run of each row); each block reduces its
// slice (Welford's mean and M2 for the statistics; sum(gy) and sum(gy * (x - mean)) for the
// backward) and writes one partial; a per-channel pass merges the S partials in order (Chan's
// formula for the statistics). No atomics, so results are deterministic. The elementwise
// passes (normalize, input gradient) use per-channel coefficients the merge pass computes.
#include <algorithm>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "ops/batch_norm.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

template <class T>
T* ptr(const Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

constexpr int kTile = 32;  // channels per block in the channels-last reductions

// The reduction's layout: blocks (channel groups x slices). NCHW: one channel a block, the
// block's threads over its positions; channels-last (NHWC: C innermost): kTile channels a
// block, thread (channel lane, row lane), so a warp reads kTile neighbouring channels of a row.
struct Split {
  bool nhwc;
  int64_t groups, S;  // channel groups (channels, or tiles of kTile), slices per group
  unsigned blocks() const { return static_cast<unsigned>(groups * S); }
};

// About 4 blocks per SM in all, each thread with at least 4 values.
Split split(int dev, bool nhwc, int64_t C, int64_t NL) {
  const int64_t groups = nhwc ? (C + kTile - 1) / kTile : C;
  const int64_t per_thread = nhwc ? kThreads / kTile : kThreads;  // values a slice-row takes
  const int64_t want = (4 * sm_count(dev) + groups - 1) / std::max<int64_t>(groups, 1);
  const int64_t most = std::max<int64_t>(1, NL / (per_thread * 4));
  return {nhwc, groups, std::clamp<int64_t>(std::min(want, most), 1, 1024)};
}

// Walks the flat positions j = n * L + l of one channel's slice [j0, j1), thread by thread,
// calling f(offset of (n, c, l)).
template <class F>
__device__ __forceinline__ void walk_slice(int64_t C, int64_t L, int64_t c, int64_t j0, int64_t j1,
                                           F&& f) {
  int64_t j = j0 + threadIdx.x;
  if (j >= j1) return;
  int64_t n = j / L, l = j - n * L;
  const int64_t dn = blockDim.x / L, dl = blockDim.x % L;
  for (; j < j1; j += blockDim.x) {
    f((n * C + c) * L + l);
    n += dn;
    l += dl;
    if (l >= L) {
      l -= L;
      ++n;
    }
  }
}

// The channel this thread reduces (>= C: none) and its elements: f(offset) for each of the
// positions j = n * L + l in the block's slice that the thread takes.
template <bool NHWC>
__device__ __forceinline__ int64_t channel_of(int64_t S) {
  if constexpr (NHWC)
    return (blockIdx.x / S) * kTile + threadIdx.x % kTile;
  else
    return blockIdx.x / S;
}

template <bool NHWC, class F>
__device__ __forceinline__ int64_t visit_channel(int64_t C, int64_t L, int64_t NL, int64_t S,
                                                 F&& f) {
  const int64_t sl = blockIdx.x % S, per = (NL + S - 1) / S, j0 = sl * per, j1 = min(NL, j0 + per),
                c = channel_of<NHWC>(S);
  if constexpr (!NHWC)
    walk_slice(C, L, c, j0, j1, f);
  else if (c < C)
    for (int64_t j = j0 + threadIdx.x / kTile; j < j1; j += blockDim.x / kTile) f(j * C + c);
  return c;
}

// Threads of a block that share a channel are `group` apart after the tree reduction's steps
// (kThreads / 2 down to group): 1 for NCHW, kTile for NHWC.
template <bool NHWC>
constexpr int kGroup = NHWC ? kTile : 1;

template <class A>
struct Welford {
  A n, mean, m2;
};

template <class A>
__device__ __forceinline__ Welford<A> merge(Welford<A> a, Welford<A> b) {
  if (b.n == A(0)) return a;
  if (a.n == A(0)) return b;
  const A n = a.n + b.n, delta = b.mean - a.mean, fb = b.n / n;
  return {n, a.mean + delta * fb, a.m2 + b.m2 + delta * delta * a.n * fb};
}

// Partials (n, mean, m2) per (c, slice) into part[(c * S + s) * 3 ...].
template <class T, bool NHWC>
__global__ void stats_partial_kernel(const T* __restrict__ x, dacc_t<T>* __restrict__ part,
                                     int64_t C, int64_t L, int64_t NL, int64_t S) {
  using A = dacc_t<T>;
  Welford<A> w{A(0), A(0), A(0)};
  const int64_t c = visit_channel<NHWC>(C, L, NL, S, [&](int64_t off) {
    const A v = A(x[off]);
    w.n += A(1);
    const A d = v - w.mean;
    w.mean += d / w.n;
    w.m2 += d * (v - w.mean);
  });
  __shared__ A sh[3][kThreads];
  sh[0][threadIdx.x] = w.n;
  sh[1][threadIdx.x] = w.mean;
  sh[2][threadIdx.x] = w.m2;
  __syncthreads();
  for (int step = kThreads / 2; step >= kGroup<NHWC>; step >>= 1) {
    if (threadIdx.x < step) {
      const Welford<A> r = merge<A>(
          {sh[0][threadIdx.x], sh[1][threadIdx.x], sh[2][threadIdx.x]},
          {sh[0][threadIdx.x + step], sh[1][threadIdx.x + step], sh[2][threadIdx.x + step]});
      sh[0][threadIdx.x] = r.n;
      sh[1][threadIdx.x] = r.mean;
      sh[2][threadIdx.x] = r.m2;
    }
    __syncthreads();
  }
  if (threadIdx.x < kGroup<NHWC> && c < C) {
    A* p = part + (c * S + blockIdx.x % S) * 3;
    p[0] = sh[0][threadIdx.x];
    p[1] = sh[1][threadIdx.x];
    p[2] = sh[2][threadIdx.x];
  }
}

template <class A>
__global__ void stats_merge_kernel(const A* __restrict__ part, A* __restrict__ mean,
                                   A* __restrict__ var, int64_t C, int64_t S) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  Welford<A> w{A(0), A(0), A(0)};
  for (int64_t s = 0; s < S; ++s) {
    const A* p = part + (c * S + s) * 3;
    w = merge<A>(w, {p[0], p[1], p[2]});
  }
  mean[c] = w.mean;
  var[c] = w.n > A(0) ? w.m2 / w.n : A(0);
}

// y = x * scale[c] + shift[c]; Index: uint32_t when the element count allows (cheaper division).
template <class T, class Index>
__global__ void apply_kernel(const T* __restrict__ x, const dacc_t<T>* __restrict__ mean,
                             const dacc_t<T>* __restrict__ rstd, const dacc_t<T>* __restrict__ w,
                             const dacc_t<T>* __restrict__ b, T* __restrict__ y, Index C, Index L,
                             Index total) {
  using A = dacc_t<T>;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index c = (i / L) % C;
    const A scale = rstd[c] * (w ? w[c] : A(1));
    const A shift = (b ? b[c] : A(0)) - mean[c] * scale;
    y[i] = T(A(x[i]) * scale + shift);
  }
}

// Partials (sum gy, sum gy * (x - mean)) per (c, slice).
template <class T, bool NHWC>
__global__ void backward_partial_kernel(const T* __restrict__ gy, const T* __restrict__ x,
                                        const dacc_t<T>* __restrict__ mean,
                                        dacc_t<T>* __restrict__ part, int64_t C, int64_t L,
                                        int64_t NL, int64_t S) {
  using A = dacc_t<T>;
  const int64_t c0 = channel_of<NHWC>(S);
  const A m = c0 < C ? mean[c0] : A(0);
  A sg = A(0), sgx = A(0);
  const int64_t c = visit_channel<NHWC>(C, L, NL, S, [&](int64_t off) {
    const A g = A(gy[off]);
    sg += g;
    sgx += g * (A(x[off]) - m);
  });
  __shared__ A sh[2][kThreads];
  sh[0][threadIdx.x] = sg;
  sh[1][threadIdx.x] = sgx;
  __syncthreads();
  for (int step = kThreads / 2; step >= kGroup<NHWC>; step >>= 1) {
    if (threadIdx.x < step) {
      sh[0][threadIdx.x] += sh[0][threadIdx.x + step];
      sh[1][threadIdx.x] += sh[1][threadIdx.x + step];
    }
    __syncthreads();
  }
  if (threadIdx.x < kGroup<NHWC> && c < C) {
    part[(c * S + blockIdx.x % S) * 2] = sh[0][threadIdx.x];
    part[(c * S + blockIdx.x % S) * 2 + 1] = sh[1][threadIdx.x];
  }
}

// Per channel: gb, gw, and the input gradient's coefficients coef[c] = (k, mg, proj):
// gx = k * (gy - mg - (x - mean) * proj).
template <class T>
__global__ void backward_merge_kernel(const dacc_t<T>* __restrict__ part,
                                      const dacc_t<T>* __restrict__ rstd,
                                      const dacc_t<T>* __restrict__ w, dacc_t<T>* __restrict__ gw,
                                      dacc_t<T>* __restrict__ gb, dacc_t<T>* __restrict__ coef,
                                      int64_t C, int64_t S, double count, bool training) {
  using A = dacc_t<T>;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  double sg = 0, sgx = 0;
  for (int64_t s = 0; s < S; ++s) {
    sg += double(part[(c * S + s) * 2]);
    sgx += double(part[(c * S + s) * 2 + 1]);
  }
  const A r = rstd[c];
  if (gb) gb[c] = A(sg);
  if (gw) gw[c] = A(sgx * double(r));
  if (!coef) return;
  const A wv = w ? w[c] : A(1);
  coef[c * 3] = wv * r;
  coef[c * 3 + 1] = training ? A(sg / count) : A(0);
  coef[c * 3 + 2] = training ? A(sgx / count) * r * r : A(0);
}

template <class T, class Index>
__global__ void backward_input_kernel(const T* __restrict__ gy, const T* __restrict__ x,
                                      const dacc_t<T>* __restrict__ mean,
                                      const dacc_t<T>* __restrict__ coef, T* __restrict__ gx,
                                      Index C, Index L, Index total) {
  using A = dacc_t<T>;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index c = (i / L) % C;
    const A* k = coef + c * 3;
    gx[i] = T(k[0] * (A(gy[i]) - k[1] - (A(x[i]) - mean[c]) * k[2]));
  }
}

struct Dims {
  int64_t N, C, L;
};
Dims dims_of(const Tensor& x) {
  const int64_t N = x.dim(0), C = x.dim(1);
  return {N, C, x.numel() / std::max<int64_t>(N * C, 1)};
}

bool small(int64_t total) { return total < (int64_t(1) << 31); }

void cuda_stats(const Tensor& x, const Tensor& mean, const Tensor& var) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const Dims d = dims_of(x);
  const int64_t NL = d.N * d.L;
  const Split sp = split(dev, !x.is_contiguous(), d.C, NL);
  const int64_t S = sp.S;
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    Tensor part = Tensor::empty(Shape{d.C * S * 3}, mean.dtype(), x.device());
    if (sp.nhwc)
      stats_partial_kernel<T, true>
          <<<sp.blocks(), kThreads, 0, st>>>(ptr<T>(x), ptr<A>(part), d.C, d.L, NL, S);
    else
      stats_partial_kernel<T, false>
          <<<sp.blocks(), kThreads, 0, st>>>(ptr<T>(x), ptr<A>(part), d.C, d.L, NL, S);
    TS_CUDA_CHECK_LAUNCH();
    stats_merge_kernel<A>
        <<<grid_for(d.C), kThreads, 0, st>>>(ptr<A>(part), ptr<A>(mean), ptr<A>(var), d.C, S);
    TS_CUDA_CHECK_LAUNCH();
  });
}

void cuda_apply(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor* w,
                const Tensor* b, const Tensor& y) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  Dims d = dims_of(x);
  if (!x.is_contiguous()) d.L = 1;  // channels-last: the channel is innermost
  const int64_t total = x.numel();
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), "batch_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    const A* wp = w ? ptr<A>(*w) : nullptr;
    const A* bp = b ? ptr<A>(*b) : nullptr;
    if (small(total))
      apply_kernel<T, uint32_t><<<grid_for(total), kThreads, 0, st>>>(
          ptr<T>(x), ptr<A>(mean), ptr<A>(rstd), wp, bp, ptr<T>(y), uint32_t(d.C), uint32_t(d.L),
          uint32_t(total));
    else
      apply_kernel<T, int64_t><<<grid_for(total), kThreads, 0, st>>>(
          ptr<T>(x), ptr<A>(mean), ptr<A>(rstd), wp, bp, ptr<T>(y), d.C, d.L, total);
    TS_CUDA_CHECK_LAUNCH();
  });
}

void cuda_backward(const Tensor& gy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                   const Tensor* w, const Tensor* gx, const Tensor* gw, const Tensor* gb,
                   bool training) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  const Dims d = dims_of(x);
  const int64_t NL = d.N * d.L, total = x.numel();
  const Split sp = split(dev, !x.is_contiguous(), d.C, NL);
  const int64_t S = sp.S, Le = sp.nhwc ? 1 : d.L;  // Le: the elementwise pass's L
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    Tensor part = Tensor::empty(Shape{d.C * S * 2}, mean.dtype(), x.device());
    Tensor coef = gx ? Tensor::empty(Shape{d.C * 3}, mean.dtype(), x.device()) : Tensor();
    if (sp.nhwc)
      backward_partial_kernel<T, true><<<sp.blocks(), kThreads, 0, st>>>(
          ptr<T>(gy), ptr<T>(x), ptr<A>(mean), ptr<A>(part), d.C, d.L, NL, S);
    else
      backward_partial_kernel<T, false><<<sp.blocks(), kThreads, 0, st>>>(
          ptr<T>(gy), ptr<T>(x), ptr<A>(mean), ptr<A>(part), d.C, d.L, NL, S);
    TS_CUDA_CHECK_LAUNCH();
    backward_merge_kernel<T><<<grid_for(d.C), kThreads, 0, st>>>(
        ptr<A>(part), ptr<A>(rstd), w ? ptr<A>(*w) : nullptr, gw ? ptr<A>(*gw) : nullptr,
        gb ? ptr<A>(*gb) : nullptr, gx ? ptr<A>(coef) : nullptr, d.C, S, double(NL), training);
    TS_CUDA_CHECK_LAUNCH();
    if (!gx) return;
    if (small(total))
      backward_input_kernel<T, uint32_t><<<grid_for(total), kThreads, 0, st>>>(
          ptr<T>(gy), ptr<T>(x), ptr<A>(mean), ptr<A>(coef), ptr<T>(*gx), uint32_t(d.C),
          uint32_t(Le), uint32_t(total));
    else
      backward_input_kernel<T, int64_t><<<grid_for(total), kThreads, 0, st>>>(
          ptr<T>(gy), ptr<T>(x), ptr<A>(mean), ptr<A>(coef), ptr<T>(*gx), d.C, Le, total);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(batch_norm_stats_stub, CUDA, &cuda_stats);
TS_REGISTER_KERNEL(batch_norm_apply_stub, CUDA, &cuda_apply);
TS_REGISTER_KERNEL(batch_norm_backward_stub, CUDA, &cuda_backward);

}  // namespace ts::cuda
