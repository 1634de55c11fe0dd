// CUDA kernels of layer norm over rows of n contiguous elements, forward and backward
// (ops/nn_fused.h), laid out as Note [CUDA row kernels] (cuda/nn_rows.cuh) says, with the CPU
// kernels' arithmetic (cpu/nn_norm_kernels.cpp): two-pass statistics, mean/rstd saved in the
// compute type (float for 16-bit inputs). The weight/bias gradients are column sums over rows,
// done deterministically without float atomics: blocks of rows write partial sums, and a
// second kernel adds them in a fixed order.
#include <algorithm>

#include "cuda/nn_rows.cuh"
#include "ops/nn_fused.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

using namespace rows;

template <class T, int E, int V>
__global__ void __launch_bounds__(32 * kWarpRows)
    layer_norm_warp(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                    double eps, T* __restrict__ y, dacc_t<T>* __restrict__ mean,
                    dacc_t<T>* __restrict__ rstd, int64_t nrows, int64_t n) {
  using A = dacc_t<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
  if (r >= nrows) return;
  const int lane = threadIdx.x;
  A v[E], wv[E], bv[E];
  load_row<T, E, V>(x + r * n, n, lane, v, A(0));
  if (w) load_row<T, E, V>(w, n, lane, wv, A(0));
  if (b) load_row<T, E, V>(b, n, lane, bv, A(0));
  A s = 0;
#pragma unroll
  for (int i = 0; i < E; ++i) s += v[i];
  const A mu = warp_allreduce(s, SumOp<A>()) / A(n);
  A ss = 0;
#pragma unroll
  for (int i = 0; i < E; ++i) {
    const A d = v[i] - mu;
    if (slot_index<V>(i, lane) < static_cast<int>(n)) ss += d * d;
  }
  ss = warp_allreduce(ss, SumOp<A>());
  const A rs = A(1) / ::cuda::std::sqrt(ss / A(n) + A(eps));
  if (lane == 0) {
    mean[r] = mu;
    rstd[r] = rs;
  }
#pragma unroll
  for (int i = 0; i < E; ++i) {
    A o = (v[i] - mu) * rs;
    if (w) o = o * wv[i];
    if (b) o = o + bv[i];
    v[i] = o;
  }
  store_row<T, E, V>(y + r * n, n, lane, v);
}

template <class T>
__global__ void __launch_bounds__(kRowBlock)
    layer_norm_block(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                     double eps, T* __restrict__ y, dacc_t<T>* __restrict__ mean,
                     dacc_t<T>* __restrict__ rstd, int64_t nrows, int64_t n) {
  using A = dacc_t<T>;
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const T* xr = x + r * n;
    A s = 0;
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) s += dconvert<A>(xr[i]);
    const A mu = block_allreduce(s, SumOp<A>()) / A(n);
    A ss = 0;
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) {
      const A d = dconvert<A>(xr[i]) - mu;
      ss += d * d;
    }
    ss = block_allreduce(ss, SumOp<A>());
    const A rs = A(1) / ::cuda::std::sqrt(ss / A(n) + A(eps));
    if (threadIdx.x == 0) {
      mean[r] = mu;
      rstd[r] = rs;
    }
    T* yr = y + r * n;
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) {
      A v = (dconvert<A>(xr[i]) - mu) * rs;
      if (w) v = v * dconvert<A>(w[i]);
      if (b) v = v + dconvert<A>(b[i]);
      yr[i] = dconvert<T>(v);
    }
  }
}

// gx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = gy * w.
template <class T, int E, int V>
__global__ void __launch_bounds__(32 * kWarpRows)
    layer_norm_backward_warp(const T* __restrict__ gy, const T* __restrict__ x,
                             const dacc_t<T>* __restrict__ mean, const dacc_t<T>* __restrict__ rstd,
                             const T* __restrict__ w, T* __restrict__ gx, int64_t nrows,
                             int64_t n) {
  using A = dacc_t<T>;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpRows + threadIdx.y;
  if (r >= nrows) return;
  const int lane = threadIdx.x;
  A xv[E], gv[E];
  load_row<T, E, V>(x + r * n, n, lane, xv, A(0));
  load_row<T, E, V>(gy + r * n, n, lane, gv, A(0));  // padding: g = 0 adds nothing below
  if (w) {
    A wv[E];
    load_row<T, E, V>(w, n, lane, wv, A(0));
#pragma unroll
    for (int i = 0; i < E; ++i) gv[i] *= wv[i];
  }
  const A mu = mean[r], rs = rstd[r];
  A sg = 0, sgx = 0;
#pragma unroll
  for (int i = 0; i < E; ++i) {
    xv[i] = (xv[i] - mu) * rs;
    sg += gv[i];
    sgx += gv[i] * xv[i];
  }
  const A mg = warp_allreduce(sg, SumOp<A>()) / A(n);
  const A mgx = warp_allreduce(sgx, SumOp<A>()) / A(n);
#pragma unroll
  for (int i = 0; i < E; ++i) gv[i] = rs * (gv[i] - mg - xv[i] * mgx);
  store_row<T, E, V>(gx + r * n, n, lane, gv);
}

template <class T>
__global__ void __launch_bounds__(kRowBlock)
    layer_norm_backward_block(const T* __restrict__ gy, const T* __restrict__ x,
                              const dacc_t<T>* __restrict__ mean,
                              const dacc_t<T>* __restrict__ rstd, const T* __restrict__ w,
                              T* __restrict__ gx, int64_t nrows, int64_t n) {
  using A = dacc_t<T>;
  for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
    const T *gr = gy + r * n, *xr = x + r * n;
    const A mu = mean[r], rs = rstd[r];
    A sg = 0, sgx = 0;
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) {
      const A g = w ? dconvert<A>(gr[i]) * dconvert<A>(w[i]) : dconvert<A>(gr[i]);
      sg += g;
      sgx += g * ((dconvert<A>(xr[i]) - mu) * rs);
    }
    const A mg = block_allreduce(sg, SumOp<A>()) / A(n);
    const A mgx = block_allreduce(sgx, SumOp<A>()) / A(n);
    T* out = gx + r * n;
    for (int64_t i = threadIdx.x; i < n; i += kRowBlock) {
      const A g = w ? dconvert<A>(gr[i]) * dconvert<A>(w[i]) : dconvert<A>(gr[i]);
      const A xh = (dconvert<A>(xr[i]) - mu) * rs;
      out[i] = dconvert<T>(rs * (g - mg - xh * mgx));
    }
  }
}

// Column partial sums: block (blockIdx.x, blockIdx.y) covers 32 columns and rows
// [y * chunk, (y + 1) * chunk); its 8 thread rows stride the rows, then add up in order.
constexpr int kColRows = 8;

template <class T>
__global__ void __launch_bounds__(32 * kColRows)
    layer_norm_col_partials(const T* __restrict__ gy, const T* __restrict__ x,
                            const dacc_t<T>* __restrict__ mean, const dacc_t<T>* __restrict__ rstd,
                            int64_t nrows, int64_t n, int64_t chunk, dacc_t<T>* __restrict__ pw,
                            dacc_t<T>* __restrict__ pb) {
  using A = dacc_t<T>;
  __shared__ A sw[kColRows][33], sb[kColRows][33];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + tx;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t r1 = ::min(nrows, r0 + chunk);
  A aw = 0, ab = 0;
  if (c < n) {
    // Four rows per iteration: eight loads in flight per thread instead of two.
    int64_t r = r0 + ty;
    for (; r + 3 * kColRows < r1; r += 4 * kColRows) {
      A g[4], xh[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const int64_t rk = r + k * kColRows;
        g[k] = dconvert<A>(gy[rk * n + c]);
        xh[k] = pw ? (dconvert<A>(x[rk * n + c]) - mean[rk]) * rstd[rk] : A(0);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        aw += g[k] * xh[k];
        ab += g[k];
      }
    }
    for (; r < r1; r += kColRows) {
      const A g = dconvert<A>(gy[r * n + c]);
      if (pw) aw += g * ((dconvert<A>(x[r * n + c]) - mean[r]) * rstd[r]);
      ab += g;
    }
  }
  sw[ty][tx] = aw;
  sb[ty][tx] = ab;
  __syncthreads();
  if (ty == 0 && c < n) {
    for (int k = 1; k < kColRows; ++k) {
      aw += sw[k][tx];
      ab += sb[k][tx];
    }
    if (pw) pw[blockIdx.y * n + c] = aw;
    if (pb) pb[blockIdx.y * n + c] = ab;
  }
}

template <class T>
__global__ void layer_norm_col_finish(const dacc_t<T>* __restrict__ pw,
                                      const dacc_t<T>* __restrict__ pb, int64_t chunks, int64_t n,
                                      T* __restrict__ gw, T* __restrict__ gb) {
  using A = dacc_t<T>;
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= n) return;
  A aw = 0, ab = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    if (pw) aw += pw[k * n + c];
    if (pb) ab += pb[k * n + c];
  }
  if (gw) gw[c] = dconvert<T>(aw);
  if (gb) gb[c] = dconvert<T>(ab);
}

void layer_norm_cuda(const Tensor& x, const Tensor* w, const Tensor* b, double eps, const Tensor& y,
                     const Tensor& mean, const Tensor& rstd, int64_t nrows, int64_t n) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), "layer_norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    const T *xp = cptr<T>(&x), *wp = cptr<T>(w), *bp = cptr<T>(b);
    T* yp = reinterpret_cast<T*>(y.data_ptr());
    A* mp = reinterpret_cast<A*>(mean.data_ptr());
    A* rp = reinterpret_cast<A*>(rstd.data_ptr());
    if (n <= kMaxWarpCols) {
      const bool vec =
          aligned16(xp) && aligned16(yp) && (!wp || aligned16(wp)) && (!bp || aligned16(bp));
      dispatch_warp_cols<T>(n, vec, [&](auto e, auto v) {
        layer_norm_warp<T, decltype(e)::value, decltype(v)::value>
            <<<warp_row_blocks(nrows), dim3(32, kWarpRows), 0, st>>>(xp, wp, bp, eps, yp, mp, rp,
                                                                     nrows, n);
      });
    } else {
      layer_norm_block<T>
          <<<row_block_grid(nrows), kRowBlock, 0, st>>>(xp, wp, bp, eps, yp, mp, rp, nrows, n);
    }
    TS_CUDA_CHECK_LAUNCH();
  });
}

// Splits the rows into enough chunks to fill the device (fixed per device and shape, so the
// partial sums and their order, hence the results, are the same on every run).
int64_t column_chunks(int64_t nrows, int64_t n, int dev) {
  const int64_t tiles = (n + 31) / 32;
  const int64_t want = (static_cast<int64_t>(sm_count(dev)) * 16 + tiles - 1) / tiles;
  return std::max<int64_t>(1, std::min<int64_t>({want, (nrows + 31) / 32, 65535}));
}

void layer_norm_backward_cuda(const Tensor& gy, const Tensor& x, const Tensor& mean,
                              const Tensor& rstd, const Tensor* w, const Tensor& gx,
                              const Tensor* gw, const Tensor* gb, int64_t nrows, int64_t n) {
  const int dev = x.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  cuda_visit<kFloatSet>(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = dacc_t<T>;
    const T *gp = cptr<T>(&gy), *xp = cptr<T>(&x), *wp = cptr<T>(w);
    const A* mp = reinterpret_cast<const A*>(mean.data_ptr());
    const A* rp = reinterpret_cast<const A*>(rstd.data_ptr());
    T* gxp = reinterpret_cast<T*>(gx.data_ptr());
    if (n <= kMaxWarpCols) {
      const bool vec = aligned16(gp) && aligned16(xp) && aligned16(gxp) && (!wp || aligned16(wp));
      dispatch_warp_cols<T>(n, vec, [&](auto e, auto v) {
        layer_norm_backward_warp<T, decltype(e)::value, decltype(v)::value>
            <<<warp_row_blocks(nrows), dim3(32, kWarpRows), 0, st>>>(gp, xp, mp, rp, wp, gxp, nrows,
                                                                     n);
      });
    } else {
      layer_norm_backward_block<T>
          <<<row_block_grid(nrows), kRowBlock, 0, st>>>(gp, xp, mp, rp, wp, gxp, nrows, n);
    }
    TS_CUDA_CHECK_LAUNCH();
    if (!gw && !gb) return;
    const int64_t chunks = column_chunks(nrows, n, dev);
    const int64_t chunk = (nrows + chunks - 1) / chunks;
    const Tensor part = Tensor::empty(Shape{2 * chunks * n}, mean.dtype(), x.device());
    A* pw = gw ? reinterpret_cast<A*>(part.data_ptr()) : nullptr;
    A* pb = gb ? reinterpret_cast<A*>(part.data_ptr()) + chunks * n : nullptr;
    const dim3 grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>(chunks));
    layer_norm_col_partials<T>
        <<<grid, dim3(32, kColRows), 0, st>>>(gp, xp, mp, rp, nrows, n, chunk, pw, pb);
    TS_CUDA_CHECK_LAUNCH();
    layer_norm_col_finish<T><<<static_cast<unsigned>((n + 255) / 256), 256, 0, st>>>(
        pw, pb, chunks, n, gw ? reinterpret_cast<T*>(gw->data_ptr()) : nullptr,
        gb ? reinterpret_cast<T*>(gb->data_ptr()) : nullptr);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(layer_norm_stub, CUDA, &layer_norm_cuda);
TS_REGISTER_KERNEL(layer_norm_backward_stub, CUDA, &layer_norm_backward_cuda);

}  // namespace ts::cuda
