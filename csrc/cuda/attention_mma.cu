// Tensor-core flash attention for float16/bfloat16 (cuda/attention_mma.h): the
// FlashAttention-2 structure of cuda/attention_kernels.cu with its matmuls on WMMA 16x16x16
// tiles (16-bit inputs, float accumulators; sm_80+).
//
// Every kernel runs 4 warps over a 64-row tile (16 rows per warp: queries in the forward and
// the dQ pass, keys in the dK/dV pass) and streams the other side through shared memory in
// 64-row tiles. 16-bit tiles are stored with rows padded to D + 8 elements and float tiles to
// +4 (against bank conflicts; WMMA wants ldm % 8 / % 4 == 0 and 32-byte aligned fragments,
// which every offset below keeps). A warp's 16 x 64 score block goes through shared memory as
// float (the accumulator's register layout is unspecified), where lane pairs own a row (lane
// 2r + h holds row r's columns h, h + 2, ...: 2-way bank conflicts at most) for the masked
// softmax arithmetic; P and dS are rounded to T there before their matmuls, as FlashAttention
// does. Scores are kept in log2 units (times scale * log2(e)) so exp is one exp2f.
//
// Forward (mma_fwd): written directly on mma.sync.m16n8k16 + ldmatrix in the FlashAttention-2
// register layout (scores, softmax and the running output in registers, no shared-memory round
// trip), with K/V double-buffered by cp.async; the backward below is still on WMMA.
// Backward (no rescale): dK/dV per key tile and dQ per query tile accumulate in fragments
// across their whole loop; the dK/dV pass computes the transposed blocks S^T = K Q^T and
// dP^T = V dO^T directly, so P^T and dS^T are plain row-major A operands. Every gradient is
// written exactly once: deterministic, no atomics.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "cuda/attention_mma.h"

namespace ts::cuda {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 64;                  // rows of every tile
constexpr int kWarpRows = kTile / kWarps;  // 16: one WMMA row block per warp
constexpr int kSPitch = kTile + 4;         // float score rows
constexpr int kPPitch = kTile + 8;         // 16-bit P / dS rows
constexpr unsigned kFull = 0xffffffffu;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -__builtin_huge_valf();

template <int D>
constexpr int kHPitch = D + 8;  // 16-bit Q/K/V/dO rows
template <int D>
constexpr int kOPitch = D + 4;  // float output rows

using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
template <class T>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
template <class T>
using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;

template <class T>
__device__ __forceinline__ T from_f(float x) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else
    return __float2bfloat16_rn(x);
}

// The 16-bit bit pattern of x rounded to T, low half first: one 32-bit operand register.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  const T a = from_f<T>(lo), b = from_f<T>(hi);
  uint16_t ua, ub;
  __builtin_memcpy(&ua, &a, 2);
  __builtin_memcpy(&ub, &b, 2);
  return static_cast<uint32_t>(ua) | (static_cast<uint32_t>(ub) << 16);
}

#ifndef TS_MMA_EMU  // the CPU emulation (tcfast_check/emu_prelude.h) supplies these
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 16-bit matrices; lanes 8m..8m+7 give the row addresses of matrix m, and register m
// of lane l holds row l/4, columns 2(l%4), +1 of matrix m (with .trans: of its transpose).
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_u32(p)));
}

// d += A B for a 16x16 A (row) and a 16x8 B (col) in the PTX m16n8k16 fragment layouts.
template <class T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  if constexpr (std::is_same_v<T, __half>)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16 bytes global -> shared, bypassing L1; zero-filled when !ok (src is then not read).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(ok ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
#endif

__device__ __forceinline__ bool sees(const MmaGeom& g, int i, int j) {
  return i < g.L && j < g.S && (!g.causal || j <= i);
}

// A thread's share of a 64-row tile in 16-byte chunks (D / 16 of them).
template <int D>
struct Chunks {
  static constexpr int C = D / 8, kIters = kTile * C / kThreads;
  static_assert(kTile * C % kThreads == 0, "whole chunks per thread");
  uint4 x[kIters];
};

// Loads rows [r0, r0 + 64) of a (nrows, width) row-major matrix into registers, zero past nrows
// and from width up to D; src is 16-byte aligned and width % 8 == 0 (whole chunks per row).
template <class T, int D>
__device__ __forceinline__ void fetch(Chunks<D>& ch, const T* __restrict__ src, int r0, int nrows,
                                      int width) {
  constexpr int C = Chunks<D>::C;
#pragma unroll
  for (int it = 0; it < Chunks<D>::kIters; ++it) {
    const int e = threadIdx.x + it * kThreads, r = e / C, c = (e % C) * 8;
    ch.x[it] = make_uint4(0u, 0u, 0u, 0u);
    if (r0 + r < nrows && c < width)
      ch.x[it] = *reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r0 + r) * width + c);
  }
}

template <class T, int D>
__device__ __forceinline__ void put(const Chunks<D>& ch, T* dst) {
  constexpr int C = Chunks<D>::C;
#pragma unroll
  for (int it = 0; it < Chunks<D>::kIters; ++it) {
    const int e = threadIdx.x + it * kThreads;
    *reinterpret_cast<uint4*>(dst + (e / C) * kHPitch<D> + (e % C) * 8) = ch.x[it];
  }
}

// The element-wise fallback of fetch + put for widths or pointers off the 16-byte chunks.
template <class T, int D>
__device__ __forceinline__ void load_scalar(T* dst, const T* __restrict__ src, int r0, int nrows,
                                            int width) {
  for (int e = threadIdx.x; e < kTile * D; e += kThreads) {
    const int r = e / D, c = e % D;
    T x = from_f<T>(0.f);
    if (r0 + r < nrows && c < width) x = src[static_cast<int64_t>(r0 + r) * width + c];
    dst[r * kHPitch<D> + c] = x;
  }
}

// One tile: fetch + put, or the element-wise loads.
template <class T, int D>
__device__ __forceinline__ void load_tile(T* dst, const T* __restrict__ src, int width, bool vec,
                                          int r0, int nrows) {
  if (vec) {
    Chunks<D> a;
    fetch<T, D>(a, src, r0, nrows, width);
    put<T, D>(a, dst);
  } else {
    load_scalar<T, D>(dst, src, r0, nrows, width);
  }
}

// Rows [r0, r0 + 64) of two (nrows, width0/1) row-major matrices (K and V, or Q and dO) into
// tiles of pitch D + 8, zero past nrows and from the width up to D (so padding never meets
// garbage: 0 * NaN would spread). vec0/1: 16-byte chunks apply (see fetch); then (D <= 64) all
// loads of both tiles are in flight before the first store.
template <class T, int D>
__device__ __forceinline__ void load_tiles(T* dst0, const T* __restrict__ src0, int width0,
                                           bool vec0, T* dst1, const T* __restrict__ src1,
                                           int width1, bool vec1, int r0, int nrows) {
  if (D <= 64 && vec0 && vec1) {  // at D = 128 the second tile's registers would spill
    Chunks<D> a, b;
    fetch<T, D>(a, src0, r0, nrows, width0);
    fetch<T, D>(b, src1, r0, nrows, width1);
    put<T, D>(a, dst0);
    put<T, D>(b, dst1);
    return;
  }
  load_tile<T, D>(dst0, src0, width0, vec0, r0, nrows);
  load_tile<T, D>(dst1, src1, width1, vec1, r0, nrows);
}

// acc[c] (c < 4) = A_w B^T for the warp's 16 rows `a` of a 16-bit tile and the 64 rows of
// tile `b` (both pitch D + 8): the 16 x 64 block of row dot products.
template <class T, int D>
__device__ __forceinline__ void dots(Acc (&acc)[kTile / 16], const T* a, const T* b) {
  constexpr int P = kHPitch<D>;
#pragma unroll
  for (int c = 0; c < kTile / 16; ++c) wmma::fill_fragment(acc[c], 0.f);
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    FragA<T> fa;
    wmma::load_matrix_sync(fa, a + kk * 16, P);
#pragma unroll
    for (int c = 0; c < kTile / 16; ++c) {
      FragBt<T> fb;  // col-major view of b's rows: B^T
      wmma::load_matrix_sync(fb, b + c * 16 * P + kk * 16, P);
      wmma::mma_sync(acc[c], fa, fb, acc[c]);
    }
  }
}

// acc[c] (c < D/16) += A B for a warp's 16 x 64 16-bit block `a` (pitch kPPitch) and a
// 64 x D tile `b` (pitch D + 8).
template <class T, int D>
__device__ __forceinline__ void accumulate(Acc (&acc)[D / 16], const T* a, const T* b) {
  constexpr int P = kHPitch<D>;
#pragma unroll
  for (int kk = 0; kk < kTile / 16; ++kk) {
    FragA<T> fa;
    wmma::load_matrix_sync(fa, a + kk * 16, kPPitch);
#pragma unroll
    for (int c = 0; c < D / 16; ++c) {
      FragB<T> fb;
      wmma::load_matrix_sync(fb, b + kk * 16 * P + c * 16, P);
      wmma::mma_sync(acc[c], fa, fb, acc[c]);
    }
  }
}

template <int N>
__device__ __forceinline__ void store_scores(float* dst, const Acc (&acc)[N]) {
#pragma unroll
  for (int c = 0; c < N; ++c)
    wmma::store_matrix_sync(dst + c * 16, acc[c], kSPitch, wmma::mem_row_major);
}

// Writes a warp's 16 x D float accumulators (times mul) as rows [r0, r0 + 16) of a
// (nrows, width) T matrix, staged through `stage` (16 x (D + 4) floats of the warp's own).
template <class T, int D>
__device__ __forceinline__ void write_rows(const Acc (&acc)[D / 16], float* stage, T* dst, int r0,
                                           int nrows, int width, float mul) {
  constexpr int P = kOPitch<D>;
  __syncwarp();  // the warp's earlier readers of `stage` are done
#pragma unroll
  for (int c = 0; c < D / 16; ++c)
    wmma::store_matrix_sync(stage + c * 16, acc[c], P, wmma::mem_row_major);
  __syncwarp();
  for (int e = threadIdx.x % 32; e < kWarpRows * D; e += 32) {
    const int r = e / D, c = e % D;
    if (r0 + r < nrows && c < width)
      dst[static_cast<int64_t>(r0 + r) * width + c] = from_f<T>(stage[r * P + c] * mul);
  }
}

// Rows [r0, r0 + 64) of a (nrows, width) row-major matrix into a tile of pitch D + 8, zero past
// nrows and from width up to D: with vec (16-byte chunks, see fetch) as cp.async copies the
// caller commits and waits for, else by plain element-wise stores.
template <class T, int D>
__device__ __forceinline__ void async_tile(T* dst, const T* __restrict__ src, int width, bool vec,
                                           int r0, int nrows) {
  if (!vec) {
    load_scalar<T, D>(dst, src, r0, nrows, width);
    return;
  }
  constexpr int C = Chunks<D>::C;
#pragma unroll
  for (int it = 0; it < Chunks<D>::kIters; ++it) {
    const int e = threadIdx.x + it * kThreads, r = e / C, c = (e % C) * 8;
    const bool ok = r0 + r < nrows && c < width;
    cp_async16(dst + r * kHPitch<D> + c, ok ? src + static_cast<int64_t>(r0 + r) * width + c : src,
               ok);
  }
}

// Q, then two (K, V) buffers: the next key tile loads while this one is used.
template <int D>
constexpr size_t kFwdSmem = 5 * kTile* kHPitch<D> * 2;

// Forward blocks per SM to fit registers for (as the shared memory allows at D <= 64).
template <int D>
constexpr int kFwdBlocks = D <= 64 ? 3 : 1;

struct Vec {
  bool q, k, v, g;  // 16-byte chunk loads for each input (see fetch)
};

// The forward in the register layout of mma.m16n8k16 (FlashAttention-2): lane l of a warp holds
// rows gr = l/4 and gr + 8 of the warp's 16 query rows, at columns 8t + 2(l%4) + {0, 1} of each
// 8-column tile t of the scores S = Q K^T and of the output O. Row max and sum are quad
// shuffles; P (rounded to T) is the A operand of P V straight from the S accumulators; O stays
// in registers and is rescaled in place.
template <class T, int D>
__global__ void __launch_bounds__(kThreads, kFwdBlocks<D>)
    mma_fwd(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
            T* __restrict__ out, float* __restrict__ lse, MmaGeom g, float scale_log2, int tiles,
            Vec vec) {
  constexpr int HP = kHPitch<D>, NT = kTile / 8, DT = D / 8;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* kv = qs + kTile * HP;  // buffer b: K at kv + 2b * kTile * HP, V after it
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gr = lane / 4, tq = lane % 4;
  const int mi = lane / 8, mr = lane % 8;  // ldmatrix: the matrix and row this lane addresses
  const int64_t n = blockIdx.x / tiles;
  const int i0 = static_cast<int>(blockIdx.x % tiles) * kTile;
  const T* kn = k + n * g.S * g.E;
  const T* vn = v + n * g.S * g.Ev;
  const int kend = g.causal ? min(g.S, i0 + kTile) : g.S;  // keys this block's rows see
  const int ntiles = (kend + kTile - 1) / kTile;
  async_tile<T, D>(qs, q + n * g.L * g.E, g.E, vec.q, i0, g.L);
  async_tile<T, D>(kv, kn, g.E, vec.k, 0, g.S);
  async_tile<T, D>(kv + kTile * HP, vn, g.Ev, vec.v, 0, g.S);
  cp_async_commit();
  const int wr = i0 + warp * kWarpRows;  // the warp's first row
  const int row[2] = {wr + gr, wr + gr + 8};
  // Q's A fragments stay in registers up to D = 64; at 128 they would spill, so they are
  // reloaded from shared memory for each key tile.
  constexpr int QF = D <= 64 ? D / 16 : 1;
  uint32_t qf[QF][4];
  float o[DT][4];
#pragma unroll
  for (int t = 0; t < DT; ++t) o[t][0] = o[t][1] = o[t][2] = o[t][3] = 0.f;
  float m[2] = {kNegInf, kNegInf}, l[2] = {0.f, 0.f};  // log2 units; l is this lane's part
  for (int it = 0; it < ntiles; ++it) {
    const int j0 = it * kTile;
    const T* ks = kv + (it & 1) * 2 * kTile * HP;
    const T* vs = ks + kTile * HP;
    __syncthreads();  // the other buffer's readers (tile it - 1) are done
    if (it + 1 < ntiles) {
      T* nb = kv + ((it + 1) & 1) * 2 * kTile * HP;
      async_tile<T, D>(nb, kn, g.E, vec.k, j0 + kTile, g.S);
      async_tile<T, D>(nb + kTile * HP, vn, g.Ev, vec.v, j0 + kTile, g.S);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const T* qa = qs + (warp * kWarpRows + lane % 16) * HP + (lane / 16) * 8;  // this lane's row
    if (QF > 1 && it == 0) {
#pragma unroll
      for (int kk = 0; kk < QF; ++kk) ldsm_x4(qf[kk], qa + kk * 16);
    }
    float s[NT][4];
#pragma unroll
    for (int t = 0; t < NT; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      if (QF == 1) ldsm_x4(qf[0], qa + kk * 16);
      const uint32_t(&a)[4] = qf[QF == 1 ? 0 : kk];
#pragma unroll
      for (int np = 0; np < NT / 2; ++np) {  // keys 16np.. as two 8-key B operands
        uint32_t b[4];
        ldsm_x4(b, ks + (np * 16 + mr + 8 * (mi >> 1)) * HP + kk * 16 + 8 * (mi & 1));
        mma16816<T>(s[2 * np], a, b[0], b[1]);
        mma16816<T>(s[2 * np + 1], a, b[2], b[3]);
      }
    }
    // A tile every row of the warp sees whole needs no mask.
    const bool full = j0 + kTile <= g.S && (!g.causal || j0 + kTile - 1 <= wr);
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int t = 0; t < NT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[t][e] * scale_log2;
        if (!full && !sees(g, row[e / 2], j0 + t * 8 + 2 * tq + (e & 1))) x = kNegInf;
        s[t][e] = x;
        mx[e / 2] = fmaxf(mx[e / 2], x);
      }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 2));
      base[h] = mx[h] == kNegInf ? 0.f : mx[h];  // a row with nothing visible yet
      const float alpha = exp2f(m[h] - base[h]);
      m[h] = mx[h];
      l[h] *= alpha;
#pragma unroll
      for (int t = 0; t < DT; ++t) {
        o[t][2 * h] *= alpha;
        o[t][2 * h + 1] *= alpha;
      }
    }
#pragma unroll
    for (int t = 0; t < NT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = exp2f(s[t][e] - base[e / 2]);
        l[e / 2] += p;
        s[t][e] = p;
      }
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {  // keys 16kk.. : the A operand from S tiles 2kk, +1
      const uint32_t pa[4] = {pack2<T>(s[2 * kk][0], s[2 * kk][1]),
                              pack2<T>(s[2 * kk][2], s[2 * kk][3]),
                              pack2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {  // columns 16dp.. as two 8-column B operands
        uint32_t b[4];
        ldsm_x4_trans(b, vs + (kk * 16 + mr + 8 * (mi & 1)) * HP + dp * 16 + 8 * (mi >> 1));
        mma16816<T>(o[2 * dp], pa, b[0], b[1]);
        mma16816<T>(o[2 * dp + 1], pa, b[2], b[3]);
      }
    }
  }
  T* on = out + n * g.L * g.Ev;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(kFull, l[h], 1);
    l[h] += __shfl_xor_sync(kFull, l[h], 2);
    const int i = row[h];
    if (i >= g.L) continue;
    if (tq == 0) lse[n * g.L + i] = l[h] > 0.f ? (m[h] + log2f(l[h])) * kLn2 : kNegInf;
    const float inv = l[h] > 0.f ? 1.f / l[h] : 0.f;
    T* orow = on + static_cast<int64_t>(i) * g.Ev;
#pragma unroll
    for (int t = 0; t < DT; ++t) {
      const int c = t * 8 + 2 * tq;
      if (c < g.Ev) orow[c] = from_f<T>(o[t][2 * h] * inv);
      if (c + 1 < g.Ev) orow[c + 1] = from_f<T>(o[t][2 * h + 1] * inv);
    }
  }
}

// Backward shared memory: four 64-row 16-bit tiles, per warp two 16 x 64 float blocks (scores
// and dP; later the staging area of write_rows, 16 x (D + 4) <= 2 * 16 * 68 floats for
// D <= 128) and two 16-bit ones (P, dS), and two 64-float rows (lse, D) for the dK/dV pass.
template <int D>
constexpr size_t kBwdSmem = 4 * kTile* kHPitch<D> * 2 + kWarps * 2 * kWarpRows* kSPitch * 4 +
                            kWarps * 2 * kWarpRows* kPPitch * 2 + 2 * kTile * 4;
static_assert(kWarpRows * kOPitch<128> <= 2 * kWarpRows * kSPitch, "staging fits");

struct BwdSmem {
  float* s;     // the warp's scores (16 x kSPitch); dP follows, then write_rows stages here
  float* dp;    // the warp's dP
  void* p;      // the warp's P (16 x kPPitch of T)
  void* ds;     // the warp's dS
  float* rows;  // 2 x 64 floats
};

// Carves kBwdSmem<D> bytes: the four 16-bit tiles t[0..3], then the warp blocks.
template <class T, int D>
__device__ __forceinline__ BwdSmem bwd_smem(unsigned char* smem, T* (&t)[4]) {
  constexpr size_t tile = kTile * kHPitch<D> * 2, fblock = kWarpRows * kSPitch * 4,
                   hblock = kWarpRows * kPPitch * 2;
  const int warp = threadIdx.x / 32;
  t[0] = reinterpret_cast<T*>(smem);
  t[1] = reinterpret_cast<T*>(smem + tile);
  t[2] = reinterpret_cast<T*>(smem + 2 * tile);
  t[3] = reinterpret_cast<T*>(smem + 3 * tile);
  unsigned char* f = smem + 4 * tile + warp * 2 * fblock;
  unsigned char* hp = smem + 4 * tile + kWarps * 2 * fblock + warp * 2 * hblock;
  unsigned char* rows = smem + 4 * tile + kWarps * 2 * (fblock + hblock);
  return BwdSmem{reinterpret_cast<float*>(f), reinterpret_cast<float*>(f + fblock), hp, hp + hblock,
                 reinterpret_cast<float*>(rows)};
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads, 1)
    mma_bwd_dkdv(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                 const T* __restrict__ go, const float* __restrict__ lse,
                 const float* __restrict__ dd, T* __restrict__ dk, T* __restrict__ dv, MmaGeom g,
                 float scale_log2, int tiles, Vec vec) {
  constexpr int HP = kHPitch<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* tl[4];
  const BwdSmem sm = bwd_smem<T, D>(smem, tl);
  T *ks = tl[0], *vs = tl[1], *qs = tl[2], *gs = tl[3];
  T* pT = static_cast<T*>(sm.p);
  T* dsT = static_cast<T*>(sm.ds);
  float* ls = sm.rows;
  float* drow = sm.rows + kTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n = blockIdx.x / tiles;
  const int j0 = static_cast<int>(blockIdx.x % tiles) * kTile;
  load_tiles<T, D>(ks, k + n * g.S * g.E, g.E, vec.k, vs, v + n * g.S * g.Ev, g.Ev, vec.v, j0, g.S);
  Acc dka[D / 16], dva[D / 16];
#pragma unroll
  for (int c = 0; c < D / 16; ++c) {
    wmma::fill_fragment(dka[c], 0.f);
    wmma::fill_fragment(dva[c], 0.f);
  }
  const int r = lane / 2, h = lane % 2, j = j0 + warp * kWarpRows + r;
  const T* qn = q + n * g.L * g.E;
  const T* gn = go + n * g.L * g.Ev;
  // Causal: queries before the key tile see none of its keys (tiles of both are 64 rows).
  for (int i0 = g.causal ? j0 : 0; i0 < g.L; i0 += kTile) {
    __syncthreads();  // the previous tile's readers are done
    load_tiles<T, D>(qs, qn, g.E, vec.q, gs, gn, g.Ev, vec.g, i0, g.L);
    for (int t = threadIdx.x; t < kTile; t += kThreads) {
      const bool in = i0 + t < g.L;
      ls[t] = in ? lse[n * g.L + i0 + t] * kLog2e : 0.f;
      drow[t] = in ? dd[n * g.L + i0 + t] : 0.f;
    }
    __syncthreads();
    {
      Acc s[kTile / 16];
      dots<T, D>(s, ks + warp * kWarpRows * HP, qs);  // S^T: keys x queries
      store_scores(sm.s, s);
      dots<T, D>(s, vs + warp * kWarpRows * HP, gs);  // dP^T
      store_scores(sm.dp, s);
    }
    __syncwarp();
#pragma unroll 8
    for (int u = 0; u < kTile / 2; ++u) {
      const int col = 2 * u + h;
      const float p =
          sees(g, i0 + col, j) ? exp2f(sm.s[r * kSPitch + col] * scale_log2 - ls[col]) : 0.f;
      pT[r * kPPitch + col] = from_f<T>(p);
      dsT[r * kPPitch + col] = from_f<T>(p * (sm.dp[r * kSPitch + col] - drow[col]));
    }
    __syncwarp();
    accumulate<T, D>(dva, pT, gs);   // dV += P^T dO
    accumulate<T, D>(dka, dsT, qs);  // dK += dS^T Q
  }
  const int w0 = j0 + warp * kWarpRows;
  write_rows<T, D>(dka, sm.s, dk + n * g.S * g.E, w0, g.S, g.E, g.scale);
  write_rows<T, D>(dva, sm.s, dv + n * g.S * g.Ev, w0, g.S, g.Ev, 1.f);
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads, 1)
    mma_bwd_dq(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               const T* __restrict__ go, const float* __restrict__ lse,
               const float* __restrict__ dd, T* __restrict__ dq, MmaGeom g, float scale_log2,
               int tiles, Vec vec) {
  constexpr int HP = kHPitch<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* tl[4];
  const BwdSmem sm = bwd_smem<T, D>(smem, tl);
  T *qs = tl[0], *gs = tl[1], *ks = tl[2], *vs = tl[3];
  T* dsw = static_cast<T*>(sm.ds);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t n = blockIdx.x / tiles;
  const int i0 = static_cast<int>(blockIdx.x % tiles) * kTile;
  load_tiles<T, D>(qs, q + n * g.L * g.E, g.E, vec.q, gs, go + n * g.L * g.Ev, g.Ev, vec.g, i0,
                   g.L);
  const int r = lane / 2, h = lane % 2, i = i0 + warp * kWarpRows + r;
  const bool in = i < g.L;
  const float li = in ? lse[n * g.L + i] * kLog2e : 0.f, di = in ? dd[n * g.L + i] : 0.f;
  Acc dqa[D / 16];
#pragma unroll
  for (int c = 0; c < D / 16; ++c) wmma::fill_fragment(dqa[c], 0.f);
  const T* kn = k + n * g.S * g.E;
  const T* vn = v + n * g.S * g.Ev;
  const int kend = g.causal ? min(g.S, i0 + kTile) : g.S;
  for (int j0 = 0; j0 < kend; j0 += kTile) {
    __syncthreads();
    load_tiles<T, D>(ks, kn, g.E, vec.k, vs, vn, g.Ev, vec.v, j0, g.S);
    __syncthreads();
    {
      Acc s[kTile / 16];
      dots<T, D>(s, qs + warp * kWarpRows * HP, ks);  // S
      store_scores(sm.s, s);
      dots<T, D>(s, gs + warp * kWarpRows * HP, vs);  // dP
      store_scores(sm.dp, s);
    }
    __syncwarp();
#pragma unroll 8
    for (int u = 0; u < kTile / 2; ++u) {
      const int col = 2 * u + h;
      const float p = sees(g, i, j0 + col) ? exp2f(sm.s[r * kSPitch + col] * scale_log2 - li) : 0.f;
      dsw[r * kPPitch + col] = from_f<T>(p * (sm.dp[r * kSPitch + col] - di));
    }
    __syncwarp();
    accumulate<T, D>(dqa, dsw, ks);  // dQ += dS K
  }
  write_rows<T, D>(dqa, sm.s, dq + n * g.L * g.E, i0 + warp * kWarpRows, g.L, g.E, g.scale);
}

// Calls f(std::integral_constant<int, D>) for the padded head dim D >= max(E, Ev).
template <class F>
cudaError_t dispatch_head_dim(const MmaGeom& g, F&& f) {
  const int e = g.E > g.Ev ? g.E : g.Ev;
  if (e <= 32) return f(std::integral_constant<int, 32>{});
  if (e <= 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});
}

bool vec_ok(const void* p, int width) {
  return width % 8 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Grid of N * ceil(rows / 64) blocks (n in x: N can pass 65535); false if too many.
bool grid_of(const MmaGeom& g, int rows, int& tiles, unsigned& blocks) {
  tiles = (rows + kTile - 1) / kTile;
  const int64_t b = g.N * tiles;
  blocks = static_cast<unsigned>(b);
  return b < (int64_t{1} << 31);
}

template <class K>
cudaError_t allow_smem(K kernel, size_t bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

}  // namespace

template <class T>
cudaError_t flash_mma_forward(const T* q, const T* k, const T* v, T* out, float* lse,
                              const MmaGeom& g, cudaStream_t st) {
  int tiles = 0;
  unsigned blocks = 0;
  if (!grid_of(g, g.L, tiles, blocks)) return cudaErrorInvalidConfiguration;
  const Vec vec{vec_ok(q, g.E), vec_ok(k, g.E), vec_ok(v, g.Ev), false};
  const float scale_log2 = g.scale * kLog2e;
  return dispatch_head_dim(g, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const auto kernel = mma_fwd<T, D>;
    const cudaError_t e = allow_smem(kernel, kFwdSmem<D>);
    if (e != cudaSuccess) return e;
    kernel<<<blocks, kThreads, kFwdSmem<D>, st>>>(q, k, v, out, lse, g, scale_log2, tiles, vec);
    return cudaGetLastError();
  });
}

template <class T>
cudaError_t flash_mma_backward(const T* q, const T* k, const T* v, const T* gout, const float* lse,
                               const float* dd, T* dq, T* dk, T* dv, const MmaGeom& g,
                               cudaStream_t st) {
  int qtiles = 0, ktiles = 0;
  unsigned qblocks = 0, kblocks = 0;
  if (!grid_of(g, g.L, qtiles, qblocks) || !grid_of(g, g.S, ktiles, kblocks))
    return cudaErrorInvalidConfiguration;
  const Vec vec{vec_ok(q, g.E), vec_ok(k, g.E), vec_ok(v, g.Ev), vec_ok(gout, g.Ev)};
  const float scale_log2 = g.scale * kLog2e;
  return dispatch_head_dim(g, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const auto dkdv = mma_bwd_dkdv<T, D>;
    const auto dqk = mma_bwd_dq<T, D>;
    cudaError_t e = allow_smem(dkdv, kBwdSmem<D>);
    if (e == cudaSuccess) e = allow_smem(dqk, kBwdSmem<D>);
    if (e != cudaSuccess) return e;
    dkdv<<<kblocks, kThreads, kBwdSmem<D>, st>>>(q, k, v, gout, lse, dd, dk, dv, g, scale_log2,
                                                 ktiles, vec);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    dqk<<<qblocks, kThreads, kBwdSmem<D>, st>>>(q, k, v, gout, lse, dd, dq, g, scale_log2, qtiles,
                                                vec);
    return cudaGetLastError();
  });
}

#define TS_MMA_INSTANTIATE(T)                                                                      \
  template cudaError_t flash_mma_forward<T>(const T*, const T*, const T*, T*, float*,              \
                                            const MmaGeom&, cudaStream_t);                         \
  template cudaError_t flash_mma_backward<T>(const T*, const T*, const T*, const T*, const float*, \
                                             const float*, T*, T*, T*, const MmaGeom&,             \
                                             cudaStream_t);
TS_MMA_INSTANTIATE(__half)
TS_MMA_INSTANTIATE(__nv_bfloat16)
#undef TS_MMA_INSTANTIATE

}  // namespace ts::cuda
