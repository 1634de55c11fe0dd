// CUDA flash attention (ops/attention.h), FlashAttention-2 structure on CUDA cores for
// float32 (computing in float; float64 takes the composite path). float16/bfloat16 go to the
// tensor-core kernels of cuda/attention_mma.cu (the rowwise D kernel below serves both).
//
// Layout: a block of 128 threads owns 32 rows (queries in the forward and the dQ pass, keys
// in the dK/dV pass); each row is handled by a quad of 4 threads, thread t of the quad
// holding dims 4t..4t+3, 16+4t..16+4t+3, ... of the row's vectors in registers (slice_col),
// so each 16-byte shared-memory load feeds 4 FMAs, a quad's loads cover 64 consecutive
// bytes (no bank conflicts, broadcast across the quads), and a dot product is U = D/4 FMAs
// plus two quad shuffles. The other operand streams
// through shared memory in float tiles of kTile(D) rows (32 KiB for the pair of tiles).
// Scores are kept in log2 units (q pre-multiplied by scale * log2(e)) so exp is one exp2f.
//
// Forward: per (n, query tile), an online softmax over key tiles; causal blocks stop at the
// tile holding their last query's diagonal. Backward: D = rowsum(dO * O) first, then two
// kernels: dK/dV per (n, key tile) looping over query tiles (causal ones start at the key
// tile's diagonal), and dQ per (n, query tile) looping over key tiles. A separate dQ pass
// recomputes q.k and dO.v once more (about 1.4x the backward's FLOPs) but writes every
// gradient exactly once: no float32 dQ buffer, no atomics (deterministic results), and no
// extra conversion kernel for 16-bit dq.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/attention_mma.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "ops/attention.h"

namespace ts::cuda {
namespace {

constexpr int kQuad = 4;
constexpr int kRows = 32;
constexpr int kThreads = kQuad * kRows;
constexpr int kMaxHeadDim = 128;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -__builtin_huge_valf();

// Rows of the streamed tiles: two tiles of kTile x D floats take 32 KiB (at most 64 rows,
// whose scores a thread keeps in registers in the forward).
template <int D>
constexpr int kTile = 4096 / D < 64 ? 4096 / D : 64;
static_assert(kTile<32> == 64 && kTile<64> == 64 && kTile<128> == 32, "tile rows");

struct Geom {
  int64_t N;
  int L, S, E, Ev;
  float scale, scale_log2;
  bool causal;
};

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  return x;
}

// Rows [r0, r0 + R) of a (nrows, width) row-major matrix into a float tile, zero-padded to
// D columns and past nrows (so padding never meets garbage: 0 * NaN would spread).
template <class T, int R, int D>
__device__ __forceinline__ void load_tile(float (*dst)[D], const T* __restrict__ src, int r0,
                                          int nrows, int width) {
  for (int e = threadIdx.x; e < R * D; e += kThreads) {
    const int r = e / D, c = e % D;
    float x = 0.f;
    if (r0 + r < nrows && c < width)
      x = dconvert<float>(src[static_cast<int64_t>(r0 + r) * width + c]);
    dst[r][c] = x;
  }
}

// Column of element u of quad thread t's slice: 4 consecutive columns per 16-column group.
__device__ __forceinline__ int slice_col(int u, int t) { return (u / 4) * 16 + t * 4 + u % 4; }

// Thread t's slice of a row (slice_col), times `mul`, zero past width or if !valid.
template <class T, int D>
__device__ __forceinline__ void load_slice(float (&x)[D / kQuad], const T* __restrict__ row,
                                           bool valid, int width, int t, float mul) {
#pragma unroll
  for (int u = 0; u < D / kQuad; ++u) {
    const int c = slice_col(u, t);
    x[u] = valid && c < width ? dconvert<float>(row[c]) * mul : 0.f;
  }
}

template <class T, int D>
__device__ __forceinline__ void store_slice(const float (&x)[D / kQuad], T* __restrict__ row,
                                            int width, int t, float mul) {
#pragma unroll
  for (int u = 0; u < D / kQuad; ++u) {
    const int c = slice_col(u, t);
    if (c < width) row[c] = dconvert<T>(x[u] * mul);
  }
}

template <int D>
__device__ __forceinline__ float slice_dot(const float (&x)[D / kQuad], const float* tile_row,
                                           int t) {
  static_assert(D % 16 == 0, "head dims are padded to multiples of 16");
  float s = 0.f;
#pragma unroll
  for (int b = 0; b < D / 16; ++b) {
    const float4 w = *reinterpret_cast<const float4*>(tile_row + b * 16 + t * 4);
    s += x[4 * b] * w.x + x[4 * b + 1] * w.y + x[4 * b + 2] * w.z + x[4 * b + 3] * w.w;
  }
  return quad_sum(s);
}

template <int D>
__device__ __forceinline__ void slice_axpy(float a, const float* tile_row, float (&y)[D / kQuad],
                                           int t) {
#pragma unroll
  for (int b = 0; b < D / 16; ++b) {
    const float4 w = *reinterpret_cast<const float4*>(tile_row + b * 16 + t * 4);
    y[4 * b] += a * w.x;
    y[4 * b + 1] += a * w.y;
    y[4 * b + 2] += a * w.z;
    y[4 * b + 3] += a * w.w;
  }
}

__device__ __forceinline__ bool sees(const Geom& g, int i, int j) {
  return i < g.L && j < g.S && (!g.causal || j <= i);
}

// Block -> (n, first row of its tile) for `tiles` row tiles per n (n in x: N can pass 65535).
__device__ __forceinline__ void block_rows(int tiles, int64_t& n, int& r0) {
  n = blockIdx.x / tiles;
  r0 = static_cast<int>(blockIdx.x % tiles) * kRows;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_fwd(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
              T* __restrict__ out, float* __restrict__ lse, Geom g, int tiles) {
  constexpr int BC = kTile<D>, U = D / kQuad;
  __shared__ __align__(16) float ks[BC][D], vs[BC][D];
  int64_t n;
  int i0;
  block_rows(tiles, n, i0);
  const int t = threadIdx.x % kQuad, i = i0 + threadIdx.x / kQuad;
  const T* kn = k + n * g.S * g.E;
  const T* vn = v + n * g.S * g.Ev;
  float qr[U], acc[U];
  load_slice<T, D>(qr, q + (n * g.L + i) * g.E, i < g.L, g.E, t, g.scale_log2);
#pragma unroll
  for (int u = 0; u < U; ++u) acc[u] = 0.f;
  float m = kNegInf, l = 0.f;
  const int kend = g.causal ? min(g.S, i0 + kRows) : g.S;  // keys this block's rows see
  for (int j0 = 0; j0 < kend; j0 += BC) {
    __syncthreads();  // the previous tile's readers are done
    load_tile<T, BC, D>(ks, kn, j0, g.S, g.E);
    load_tile<T, BC, D>(vs, vn, j0, g.S, g.Ev);
    __syncthreads();
    float s[BC];
    float bm = kNegInf;
#pragma unroll
    for (int j = 0; j < BC; ++j) {
      const float x = slice_dot<D>(qr, ks[j], t);  // every lane shuffles: no early exits
      s[j] = sees(g, i, j0 + j) ? x : kNegInf;
      bm = fmaxf(bm, s[j]);
    }
    const float mn = fmaxf(m, bm);
    const float base = mn == kNegInf ? 0.f : mn;  // a row with nothing visible yet
    const float alpha = exp2f(m - base);
    l *= alpha;
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] *= alpha;
#pragma unroll
    for (int j = 0; j < BC; ++j) {
      const float p = exp2f(s[j] - base);
      l += p;
      slice_axpy<D>(p, vs[j], acc, t);
    }
    m = mn;
  }
  if (i < g.L) {
    store_slice<T, D>(acc, out + (n * g.L + i) * g.Ev, g.Ev, t, l > 0.f ? 1.f / l : 0.f);
    if (t == 0) lse[n * g.L + i] = l > 0.f ? (m + log2f(l)) * kLn2 : kNegInf;
  }
}

// D[r] = dO[r] . O[r], one warp per row.
template <class T>
__global__ void __launch_bounds__(256)
    rowwise_dot(const T* __restrict__ go, const T* __restrict__ o, float* __restrict__ d,
                int64_t rows, int Ev) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * 8 + threadIdx.y;
  if (r >= rows) return;  // the whole warp leaves together
  float s = 0.f;
  for (int c = threadIdx.x; c < Ev; c += 32)
    s += dconvert<float>(go[r * Ev + c]) * dconvert<float>(o[r * Ev + c]);
#pragma unroll
  for (int w = 16; w > 0; w /= 2) s += __shfl_xor_sync(0xffffffffu, s, w);
  if (threadIdx.x == 0) d[r] = s;
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_bwd_dkdv(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                   const T* __restrict__ go, const float* __restrict__ lse,
                   const float* __restrict__ dd, T* __restrict__ dk, T* __restrict__ dv, Geom g,
                   int tiles) {
  constexpr int BR = kTile<D>, U = D / kQuad;
  __shared__ __align__(16) float qs[BR][D], gs[BR][D];
  __shared__ float ls[BR], ds_row[BR];
  int64_t n;
  int j0;
  block_rows(tiles, n, j0);
  const int t = threadIdx.x % kQuad, j = j0 + threadIdx.x / kQuad;
  float kr[U], vr[U], dka[U], dva[U];
  load_slice<T, D>(kr, k + (n * g.S + j) * g.E, j < g.S, g.E, t, g.scale_log2);
  load_slice<T, D>(vr, v + (n * g.S + j) * g.Ev, j < g.S, g.Ev, t, 1.f);
#pragma unroll
  for (int u = 0; u < U; ++u) dka[u] = dva[u] = 0.f;
  const T* qn = q + n * g.L * g.E;
  const T* gn = go + n * g.L * g.Ev;
  for (int i0 = g.causal ? j0 : 0; i0 < g.L; i0 += BR) {  // earlier queries see none of these keys
    __syncthreads();
    load_tile<T, BR, D>(qs, qn, i0, g.L, g.E);
    load_tile<T, BR, D>(gs, gn, i0, g.L, g.Ev);
    for (int r = threadIdx.x; r < BR; r += kThreads) {
      const bool in = i0 + r < g.L;
      ls[r] = in ? lse[n * g.L + i0 + r] * kLog2e : 0.f;
      ds_row[r] = in ? dd[n * g.L + i0 + r] : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < BR; ++r) {
      const float s = slice_dot<D>(kr, qs[r], t);
      const float dp = slice_dot<D>(vr, gs[r], t);
      const float p = sees(g, i0 + r, j) ? exp2f(s - ls[r]) : 0.f;
      slice_axpy<D>(p, gs[r], dva, t);
      slice_axpy<D>(p * (dp - ds_row[r]), qs[r], dka, t);
    }
  }
  if (j < g.S) {
    store_slice<T, D>(dka, dk + (n * g.S + j) * g.E, g.E, t, g.scale);
    store_slice<T, D>(dva, dv + (n * g.S + j) * g.Ev, g.Ev, t, 1.f);
  }
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads)
    flash_bwd_dq(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                 const T* __restrict__ go, const float* __restrict__ lse,
                 const float* __restrict__ dd, T* __restrict__ dq, Geom g, int tiles) {
  constexpr int BC = kTile<D>, U = D / kQuad;
  __shared__ __align__(16) float ks[BC][D], vs[BC][D];
  int64_t n;
  int i0;
  block_rows(tiles, n, i0);
  const int t = threadIdx.x % kQuad, i = i0 + threadIdx.x / kQuad;
  const bool in = i < g.L;
  float qr[U], gr[U], dqa[U];
  load_slice<T, D>(qr, q + (n * g.L + i) * g.E, in, g.E, t, g.scale_log2);
  load_slice<T, D>(gr, go + (n * g.L + i) * g.Ev, in, g.Ev, t, 1.f);
#pragma unroll
  for (int u = 0; u < U; ++u) dqa[u] = 0.f;
  const float li = in ? lse[n * g.L + i] * kLog2e : 0.f, di = in ? dd[n * g.L + i] : 0.f;
  const T* kn = k + n * g.S * g.E;
  const T* vn = v + n * g.S * g.Ev;
  const int kend = g.causal ? min(g.S, i0 + kRows) : g.S;
  for (int j0 = 0; j0 < kend; j0 += BC) {
    __syncthreads();
    load_tile<T, BC, D>(ks, kn, j0, g.S, g.E);
    load_tile<T, BC, D>(vs, vn, j0, g.S, g.Ev);
    __syncthreads();
#pragma unroll 4
    for (int j = 0; j < BC; ++j) {
      const float s = slice_dot<D>(qr, ks[j], t);
      const float dp = slice_dot<D>(gr, vs[j], t);
      const float p = sees(g, i, j0 + j) ? exp2f(s - li) : 0.f;
      slice_axpy<D>(p * (dp - di), ks[j], dqa, t);
    }
  }
  if (in) store_slice<T, D>(dqa, dq + (n * g.L + i) * g.E, g.E, t, g.scale);
}

constexpr uint32_t kCudaSet = kHalfSet | (1u << static_cast<int>(DType::Float32));

// The 16-bit dtypes take the tensor-core kernels of cuda/attention_mma.cu.
template <class T>
constexpr bool kOnTensorCores = !std::is_same_v<T, float>;

MmaGeom mma_geom(const Geom& g) { return MmaGeom{g.N, g.L, g.S, g.E, g.Ev, g.scale, g.causal}; }

Geom geom_of(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
             const char* op) {
  const int64_t L = q.dim(1), S = k.dim(1), E = q.dim(2), Ev = v.dim(2);
  TS_CHECK(E <= kMaxHeadDim && Ev <= kMaxHeadDim, NotImplementedError, op, ": head dims up to ",
           kMaxHeadDim, " on CUDA, got E=", E, " and Ev=", Ev,
           " (scaled_dot_product_attention takes the composite path above that)");
  TS_CHECK(L < (int64_t{1} << 30) && S < (int64_t{1} << 30), ValueError, op,
           ": sequence lengths L=", L, ", S=", S, " too long for the CUDA kernel");
  return Geom{q.dim(0),
              static_cast<int>(L),
              static_cast<int>(S),
              static_cast<int>(E),
              static_cast<int>(Ev),
              static_cast<float>(scale),
              static_cast<float>(scale) * kLog2e,
              causal};
}

// Calls f(std::integral_constant<int, D>) for the padded head dim D >= max(E, Ev).
template <class F>
void dispatch_head_dim(const Geom& g, F&& f) {
  const int e = std::max(g.E, g.Ev);
  if (e <= 32)
    f(std::integral_constant<int, 32>{});
  else if (e <= 64)
    f(std::integral_constant<int, 64>{});
  else
    f(std::integral_constant<int, 128>{});
}

unsigned grid_of(const Geom& g, int rows, int& tiles) {
  tiles = (rows + kRows - 1) / kRows;
  const int64_t blocks = g.N * tiles;
  TS_CHECK(blocks < (int64_t{1} << 31), ValueError,
           "flash_attention: too many (batch, tile) blocks for one CUDA grid: ", blocks);
  return static_cast<unsigned>(blocks);
}

template <class T>
const T* cptr(const Tensor& x) {
  return reinterpret_cast<const T*>(x.data_ptr());
}
template <class T>
T* mptr(const Tensor& x) {
  return reinterpret_cast<T*>(x.data_ptr());
}

void flash_attention_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                          const Tensor& lse, double scale, bool causal) {
  const char* op = "flash_attention";
  const Geom g = geom_of(q, k, v, scale, causal, op);
  const int dev = q.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  int tiles = 0;
  const unsigned blocks = grid_of(g, g.L, tiles);
  cuda_visit<kCudaSet>(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kOnTensorCores<T>) {
      TS_CUDA_CHECK(flash_mma_forward<T>(cptr<T>(q), cptr<T>(k), cptr<T>(v), mptr<T>(out),
                                         mptr<float>(lse), mma_geom(g), st));
    } else {
      dispatch_head_dim(g, [&](auto d) {
        flash_fwd<T, decltype(d)::value><<<blocks, kThreads, 0, st>>>(
            cptr<T>(q), cptr<T>(k), cptr<T>(v), mptr<T>(out), mptr<float>(lse), g, tiles);
      });
      TS_CUDA_CHECK_LAUNCH();
    }
  });
}

void flash_attention_backward_cuda(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& out, const Tensor& lse, const Tensor& gout,
                                   const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                   double scale, bool causal) {
  const char* op = "flash_attention_backward";
  const Geom g = geom_of(q, k, v, scale, causal, op);
  const int dev = q.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  const Tensor dd = Tensor::empty(lse.shape(), DType::Float32, q.device());
  int qtiles = 0, ktiles = 0;
  const unsigned qblocks = grid_of(g, g.L, qtiles), kblocks = grid_of(g, g.S, ktiles);
  cuda_visit<kCudaSet>(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = g.N * g.L;
    rowwise_dot<T><<<static_cast<unsigned>((rows + 7) / 8), dim3(32, 8), 0, st>>>(
        cptr<T>(gout), cptr<T>(out), mptr<float>(dd), rows, g.Ev);
    TS_CUDA_CHECK_LAUNCH();
    if constexpr (kOnTensorCores<T>) {
      TS_CUDA_CHECK(flash_mma_backward<T>(cptr<T>(q), cptr<T>(k), cptr<T>(v), cptr<T>(gout),
                                          cptr<float>(lse), cptr<float>(dd), mptr<T>(dq),
                                          mptr<T>(dk), mptr<T>(dv), mma_geom(g), st));
    } else {
      dispatch_head_dim(g, [&](auto d) {
        constexpr int D = decltype(d)::value;
        flash_bwd_dkdv<T, D><<<kblocks, kThreads, 0, st>>>(
            cptr<T>(q), cptr<T>(k), cptr<T>(v), cptr<T>(gout), cptr<float>(lse), cptr<float>(dd),
            mptr<T>(dk), mptr<T>(dv), g, ktiles);
        TS_CUDA_CHECK_LAUNCH();
        flash_bwd_dq<T, D><<<qblocks, kThreads, 0, st>>>(cptr<T>(q), cptr<T>(k), cptr<T>(v),
                                                         cptr<T>(gout), cptr<float>(lse),
                                                         cptr<float>(dd), mptr<T>(dq), g, qtiles);
        TS_CUDA_CHECK_LAUNCH();
      });
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(flash_attention_stub, CUDA, &flash_attention_cuda);
TS_REGISTER_KERNEL(flash_attention_backward_stub, CUDA, &flash_attention_backward_cuda);

}  // namespace ts::cuda
