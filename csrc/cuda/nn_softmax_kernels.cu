// CUDA kernels of softmax/log_softmax and attention's scaled (causal) softmax over rows of n
// contiguous elements, forward and backward (ops/nn_fused.h), laid out as Note [CUDA row
// kernels] (cuda/nn_rows.cuh) says. float16/bfloat16/float32 compute in float, float64 in
// double; the arithmetic is the CPU kernels' (cpu/nn_norm_kernels.cpp), only the order of
// the row sums differs.
#include <algorithm>

#include "cuda/nn_rows.cuh"
#include "ops/nn_fused.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

using namespace rows;

// What a row computes: log or not, the factor on its scores, and for causal attention rows
// (query r % L) how many leading keys it sees and writes (AttentionRows in ops/nn_fused.h).
struct Mode {
  bool log = false;
  double scale = 1;
  int64_t L = 1;
  bool causal = false;
  int64_t block = 0;
};

__device__ __forceinline__ int64_t valid_cols(const Mode& md, int64_t r, int64_t n) {
  return md.causal ? ::min(n, r % md.L + 1) : n;
}

__device__ __forceinline__ int64_t written_cols(const Mode& md, int64_t r, int64_t n) {
  if (!md.causal || md.block <= 0) return n;
  return ::min(n, (r % md.L + md.block) / md.block * md.block);
}

template <class A>
__device__ __forceinline__ A masked_fill(bool log) {
  return log ? -::cuda::std::numeric_limits<A>::infinity() : A(0);
}

template <class T, int E, int V>
__global__ void __launch_bounds__(32 * kWarpRows)
    softmax_warp(const T* __restrict__ x, T* __restrict__ y, int64_t nrows, int64_t n, Mode md) {
  using A = dacc_t<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
  if (r >= nrows) return;  // the whole warp leaves together
  const int lane = threadIdx.x;
  const A ninf = -::cuda::std::numeric_limits<A>::infinity(), scale = A(md.scale);
  const int k = static_cast<int>(valid_cols(md, r, n));  // n <= kMaxWarpCols
  A v[E];
  load_row<T, E, V>(x + r * n, k, lane, v, ninf);  // masked keys are not even read
  A m = MaxOp<A>::identity();
#pragma unroll
  for (int s = 0; s < E; ++s) {
    v[s] = slot_index<V>(s, lane) < k ? v[s] * scale : ninf;  // * 1 is exact
    m = MaxOp<A>()(m, v[s]);
  }
  m = warp_allreduce(m, MaxOp<A>());
  // No guard for infinite maxima: a row of -inf, or one holding +inf, becomes NaN, as on
  // the CPU and in PyTorch.
  A sum = 0;
#pragma unroll
  for (int s = 0; s < E; ++s) {
    v[s] -= m;
    const A e = ::cuda::std::exp(v[s]);
    if (!md.log) v[s] = e;
    if (slot_index<V>(s, lane) < k) sum += e;
  }
  sum = warp_allreduce(sum, SumOp<A>());
  const A lse = md.log ? ::cuda::std::log(sum) : A(0), inv = md.log ? A(0) : A(1) / sum;
  const A fill = masked_fill<A>(md.log);
#pragma unroll
  for (int s = 0; s < E; ++s)
    v[s] = slot_index<V>(s, lane) < k ? (md.log ? v[s] - lse : v[s] * inv) : fill;
  store_row<T, E, V>(y + r * n, static_cast<int>(written_cols(md, r, n)), lane, v);
}

template <class T>
__global__ void __launch_bounds__(kRowBlock)
    softmax_block(const T* __restrict__ x, T* __restrict__ y, int64_t nrows, int64_t n, Mode md) {
  using A = dacc_t<T>;
  const A scale = A(md.scale), fill = masked_fill<A>(md.log);
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const int64_t k = valid_cols(md, r, n);
    A m = MaxOp<A>::identity();
    for (int64_t i = threadIdx.x; i < k; i += kRowBlock)
      m = MaxOp<A>()(m, dconvert<A>(xr[i]) * scale);
    m = block_allreduce(m, MaxOp<A>());
    A sum = 0;
    for (int64_t i = threadIdx.x; i < k; i += kRowBlock)
      sum += ::cuda::std::exp(dconvert<A>(xr[i]) * scale - m);
    sum = block_allreduce(sum, SumOp<A>());
    const A lse = ::cuda::std::log(sum), inv = A(1) / sum;
    for (int64_t i = threadIdx.x, w = written_cols(md, r, n); i < w; i += kRowBlock) {
      A out = fill;
      if (i < k) {
        const A d = dconvert<A>(xr[i]) * scale - m;
        out = md.log ? d - lse : ::cuda::std::exp(d) * inv;
      }
      yr[i] = dconvert<T>(out);
    }
  }
}

// gx = gy - exp(y) * sum(gy) (log), else scale * y * (gy - sum(gy * y)); causal rows read
// and sum only their visible keys and write 0 past them.
template <class T, int E, int V>
__global__ void __launch_bounds__(32 * kWarpRows)
    softmax_backward_warp(const T* __restrict__ y, const T* __restrict__ gy, T* __restrict__ gx,
                          int64_t nrows, int64_t n, Mode md) {
  using A = dacc_t<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
  if (r >= nrows) return;
  const int lane = threadIdx.x;
  const int k = static_cast<int>(valid_cols(md, r, n));
  A yv[E], gv[E];
  load_row<T, E, V>(y + r * n, k, lane, yv, A(0));
  load_row<T, E, V>(gy + r * n, k, lane, gv, A(0));
  A s = 0;
#pragma unroll
  for (int i = 0; i < E; ++i) {
    if (slot_index<V>(i, lane) >= k) yv[i] = gv[i] = 0;  // a select: garbage cannot leak
    s += md.log ? gv[i] : gv[i] * yv[i];
  }
  s = warp_allreduce(s, SumOp<A>());
  const A scale = A(md.scale);
#pragma unroll
  for (int i = 0; i < E; ++i)
    gv[i] = md.log ? gv[i] - ::cuda::std::exp(yv[i]) * s : scale * yv[i] * (gv[i] - s);
  store_row<T, E, V>(gx + r * n, static_cast<int>(written_cols(md, r, n)), lane, gv);
}

template <class T>
__global__ void __launch_bounds__(kRowBlock)
    softmax_backward_block(const T* __restrict__ y, const T* __restrict__ gy, T* __restrict__ gx,
                           int64_t nrows, int64_t n, Mode md) {
  using A = dacc_t<T>;
  const A scale = A(md.scale);
  const bool log = md.log;
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const T *yr = y + r * n, *gr = gy + r * n;
    T* out = gx + r * n;
    const int64_t k = valid_cols(md, r, n);
    A s = 0;
    for (int64_t i = threadIdx.x; i < k; i += kRowBlock)
      s += log ? dconvert<A>(gr[i]) : dconvert<A>(gr[i]) * dconvert<A>(yr[i]);
    s = block_allreduce(s, SumOp<A>());
    for (int64_t i = threadIdx.x, w = written_cols(md, r, n); i < w; i += kRowBlock) {
      if (i >= k) {
        out[i] = dconvert<T>(A(0));
        continue;
      }
      const A yi = dconvert<A>(yr[i]), gi = dconvert<A>(gr[i]);
      out[i] = dconvert<T>(log ? gi - ::cuda::std::exp(yi) * s : scale * yi * (gi - s));
    }
  }
}

void launch_softmax(const Tensor& x, const Tensor& out, int64_t nrows, int64_t n, const Mode& md,
                    const char* op) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = reinterpret_cast<const T*>(x.data_ptr());
    T* yp = reinterpret_cast<T*>(out.data_ptr());
    if (n <= kMaxWarpCols) {
      dispatch_warp_cols<T>(n, aligned16(xp) && aligned16(yp), [&](auto e, auto v) {
        softmax_warp<T, decltype(e)::value, decltype(v)::value>
            <<<warp_row_blocks(nrows), dim3(32, kWarpRows), 0, st>>>(xp, yp, nrows, n, md);
      });
    } else {
      softmax_block<T><<<row_block_grid(nrows), kRowBlock, 0, st>>>(xp, yp, nrows, n, md);
    }
    TS_CUDA_CHECK_LAUNCH();
  });
}

void launch_softmax_backward(const Tensor& y, const Tensor& gy, const Tensor& gx, int64_t nrows,
                             int64_t n, const Mode& md, const char* op) {
  const int dev = y.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(y.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* yp = reinterpret_cast<const T*>(y.data_ptr());
    const T* gp = reinterpret_cast<const T*>(gy.data_ptr());
    T* op_ = reinterpret_cast<T*>(gx.data_ptr());
    if (n <= kMaxWarpCols) {
      dispatch_warp_cols<T>(
          n, aligned16(yp) && aligned16(gp) && aligned16(op_), [&](auto e, auto v) {
            softmax_backward_warp<T, decltype(e)::value, decltype(v)::value>
                <<<warp_row_blocks(nrows), dim3(32, kWarpRows), 0, st>>>(yp, gp, op_, nrows, n, md);
          });
    } else {
      softmax_backward_block<T>
          <<<row_block_grid(nrows), kRowBlock, 0, st>>>(yp, gp, op_, nrows, n, md);
    }
    TS_CUDA_CHECK_LAUNCH();
  });
}

void softmax_cuda(const Tensor& x, const Tensor& out, int64_t nrows, int64_t n, bool log) {
  launch_softmax(x, out, nrows, n, Mode{log, 1.0, 1, false}, log ? "log_softmax" : "softmax");
}

void softmax_backward_cuda(const Tensor& y, const Tensor& gy, const Tensor& gx, int64_t nrows,
                           int64_t n, bool log) {
  launch_softmax_backward(y, gy, gx, nrows, n, Mode{log, 1.0, 1, false}, "softmax_backward");
}

Mode attention_mode(const AttentionRows& g) {
  return Mode{false, g.scale, std::max<int64_t>(g.L, 1), g.causal, g.block};
}

void attention_softmax_cuda(const Tensor& x, const Tensor& out, int64_t nrows, int64_t n,
                            const AttentionRows& geom) {
  launch_softmax(x, out, nrows, n, attention_mode(geom), "attention_softmax");
}

void attention_softmax_backward_cuda(const Tensor& y, const Tensor& gy, const Tensor& gx,
                                     int64_t nrows, int64_t n, const AttentionRows& geom) {
  launch_softmax_backward(y, gy, gx, nrows, n, attention_mode(geom), "attention_softmax_backward");
}

}  // namespace

TS_REGISTER_KERNEL(softmax_stub, CUDA, &softmax_cuda);
TS_REGISTER_KERNEL(softmax_backward_stub, CUDA, &softmax_backward_cuda);
TS_REGISTER_KERNEL(attention_softmax_stub, CUDA, &attention_softmax_cuda);
TS_REGISTER_KERNEL(attention_softmax_backward_stub, CUDA, &attention_softmax_backward_cuda);

}  // namespace ts::cuda
