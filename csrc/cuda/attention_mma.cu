// Tensor-core flash attention (cuda/attention_mma.h): FlashAttention-2 on mma.sync (float
// accumulators; sm_80+), operands from shared memory by ldmatrix, global -> shared copies by
// cp.async. float16/bfloat16 run mma.m16n8k16 on their 16-bit inputs. float32 runs "3xTF32"
// on mma.m16n8k8.tf32, as PyTorch's memory-efficient kernel does (CUTLASS's
// OpMultiplyAddFastF32): each float operand x splits into big = tf32(x) and small = x - big
// (split_tf32), and acc += a_small b_big + a_big b_small + a_big b_big (small products first)
// keeps float32 accuracy (the dropped a_small b_small and small's truncation to tf32 are about
// 2^-21 of the product) at tensor-core speed; plain TF32 would lose 3 decimal digits.
//
// Every kernel runs 4 warps over a 64-row tile (16 rows per warp: queries in the forward and
// the dQ pass, keys in the dK/dV pass) and streams the other side through shared memory in
// 64-row tiles, double-buffered: the next tile's cp.async copies fly while this one is used.
// Tiles are stored with rows padded by 16 bytes (D + 8 16-bit elements, D + 4 floats), so the
// 8 row addresses of an ldmatrix fall in distinct 16-byte bank groups. One mma step takes 32
// bytes of each row (k = 16 16-bit or 8 float columns), read by the same ldmatrix for both:
// an 8x8 b16 matrix is 8 rows of 4 floats, and lane l's register is row l/4, float l%4,
// exactly the tf32 A fragment (and B fragment with rows n, columns k) of mma.m16n8k8.
// A warp's 16 x 64 block of scores lives in registers in the accumulator layout of
// mma.m16n8k16 and mma.m16n8k8 (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane l holds
// rows l/4 and l/4 + 8 at columns 8t + 2(l%4) + {0, 1} of each 8-column tile t. Row max and
// sum are two quad shuffles; P and dS become the A operand of the next mma straight from
// those registers: for 16-bit T, rounded to T (as FlashAttention does), the A fragment of a
// 16-column step is exactly the accumulators of two 8-column tiles; for float, an 8-key step
// is one accumulator tile, with the k order permuted (see accumulate). Scores are kept in log2
// units (times scale * log2(e)) so exp is one ex2 (exp2_sfu).
//
// Forward: the output stays in registers and is rescaled in place by the online-softmax
// factor. Backward (no rescale): dK/dV per key tile and dQ per query tile accumulate in
// registers across their whole loop; the dK/dV pass computes the transposed blocks S^T = K Q^T
// and dP^T = V dO^T directly, so P^T and dS^T are A operands as they stand. Every gradient is
// written exactly once: deterministic, no atomics.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/attention_mma.h"
#include "kernels/random_math.h"

namespace ts::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kTile = 64;                  // rows of every tile
constexpr int kWarpRows = kTile / kWarps;  // 16: one mma row block per warp
constexpr int kNT = kTile / 8;             // 8-column tiles of a warp's 16 x 64 score block
constexpr unsigned kFull = 0xffffffffu;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr float kNegInf = -__builtin_huge_valf();

// float runs 3xTF32 on mma.m16n8k8.tf32; __half and __nv_bfloat16 mma.m16n8k16.
template <class T>
constexpr bool kTf32 = std::is_same_v<T, float>;

// Elements of T in 16 bytes: a cp.async chunk, the row padding of a tile, and the width of an
// ldmatrix 8x8 b16 matrix row.
template <class T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));

// Tile row pitch in elements (see the header comment).
template <class T, int D>
constexpr int kPitch = D + kVec<T>;

// Columns of one mma step (its k): 32 bytes of a row.
template <class T>
constexpr int kK = 2 * kVec<T>;

// The warp's own A fragments (its 16 rows of a tile, D / kK steps) stay in registers where
// that is at most 16 registers; more would spill (or starve the float path's operand
// splits), so they are reloaded for each use instead.
template <class T, int D>
constexpr int kAF = D / kK<T> <= 4 ? D / kK<T> : 1;

template <class T>
__device__ __forceinline__ T from_f(float x) {
  if constexpr (kTf32<T>)
    return x;
  else if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(x);
  else
    return __float2bfloat16_rn(x);
}

__device__ __forceinline__ uint32_t f_bits(float x) {
  uint32_t u;
  __builtin_memcpy(&u, &x, 4);
  return u;
}
__device__ __forceinline__ float bits_f(uint32_t u) {
  float x;
  __builtin_memcpy(&x, &u, 4);
  return x;
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

// d += A B for a 16x8 A (row) and an 8x8 B (col) of tf32 in the PTX m16n8k8 fragment layouts:
// a0 = A[g][t], a1 = A[g + 8][t], a2 = A[g][t + 4], a3 = A[g + 8][t + 4], b0 = B[t][g],
// b1 = B[t + 4][g] (g = lane / 4, t = lane % 4); C/D as for m16n8k16.
__device__ __forceinline__ void mma1688(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                        uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 2^x on the SFU: exp2f without fast math is this instruction plus a rescale that keeps
// results below 2^-126 (denormal), which neither P nor its sums notice; -inf gives +0.
__device__ __forceinline__ float exp2_sfu(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
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

// The 3xTF32 split of the float with bit pattern x (as CUTLASS's fast-float32 converters do):
// big = x rounded to tf32 to nearest, ties away from zero (cvt.rna: half a tf32 ulp added to
// the magnitude bits carries into the kept ones, then the low 13 bits go), small = x - big
// (exact, at most 2^-11 |x|) as it stands: the tensor core reads only the top 19 bits of a
// tf32 operand, truncating small to tf32. Three integer/float ops instead of two cvt.
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t& big, uint32_t& small) {
  big = (x + 0x1000u) & 0xffffe000u;
  small = f_bits(bits_f(x) - bits_f(big));
}

// The float A operand of mma_op: fragment registers split into big and small halves once, for
// all the mmas that reuse them.
struct Tf32A {
  uint32_t big[4], small[4];
};

// The A operand of mma_op from fragment registers r: r itself for 16-bit T; for float (r the
// bit patterns of the values) its 3xTF32 split.
template <class T>
__device__ __forceinline__ decltype(auto) a_operand(const uint32_t (&r)[4]) {
  if constexpr (kTf32<T>) {
    Tf32A a;
#pragma unroll
    for (int x = 0; x < 4; ++x) split_tf32(r[x], a.big[x], a.small[x]);
    return a;
  } else {
    return (r);
  }
}

// d += A B for an A operand (a_operand) and a B fragment (b0, b1) of T (float: bit patterns,
// split here).
template <class T, class A>
__device__ __forceinline__ void mma_op(float (&d)[4], const A& a, uint32_t b0, uint32_t b1) {
  if constexpr (kTf32<T>) {
    uint32_t bb0, bs0, bb1, bs1;
    split_tf32(b0, bb0, bs0);
    split_tf32(b1, bb1, bs1);
    mma1688(d, a.small, bb0, bb1);  // the small products first, as CUTLASS orders them
    mma1688(d, a.big, bs0, bs1);
    mma1688(d, a.big, bb0, bb1);
  } else {
    mma16816<T>(d, a, b0, b1);
  }
}

__device__ __forceinline__ bool sees(const MmaGeom& g, int i, int j) {
  return i < g.L && j < g.S && (!g.causal || j <= i);
}

// A thread's share of a 64-row tile in 16-byte chunks.
template <class T, int D>
struct Chunks {
  static constexpr int C = D / kVec<T>, kIters = kTile * C / kThreads;
  static_assert(kTile * C % kThreads == 0, "whole chunks per thread");
};

// The element-wise fallback of async_tile for widths or pointers off the 16-byte chunks.
template <class T, int D>
__device__ __forceinline__ void load_scalar(T* dst, const T* __restrict__ src, int r0, int nrows,
                                            int width, int64_t ld) {
  for (int e = threadIdx.x; e < kTile * D; e += kThreads) {
    const int r = e / D, c = e % D;
    T x = from_f<T>(0.f);
    if (r0 + r < nrows && c < width) x = src[(r0 + r) * ld + c];
    dst[r * kPitch<T, D> + c] = x;
  }
}

// Rows [r0, r0 + 64) of a (nrows, width) matrix with rows ld elements apart into a tile of
// pitch kPitch, zero
// past nrows and from width up to D (so padding never meets garbage: 0 * NaN would spread).
// With vec (src 16-byte aligned, width and ld multiples of 16 bytes) as cp.async copies the caller
// commits and waits for, else by plain element-wise stores (visible after the caller's
// __syncthreads).
template <class T, int D>
__device__ __forceinline__ void async_tile(T* dst, const T* __restrict__ src, int width,
                                           int64_t ld, bool vec, int r0, int nrows) {
  if (!vec) {
    load_scalar<T, D>(dst, src, r0, nrows, width, ld);
    return;
  }
  constexpr int C = Chunks<T, D>::C;
#pragma unroll
  for (int it = 0; it < Chunks<T, D>::kIters; ++it) {
    const int e = threadIdx.x + it * kThreads, r = e / C, c = (e % C) * kVec<T>;
    const bool ok = r0 + r < nrows && c < width;
    cp_async16(dst + r * kPitch<T, D> + c,
               ok ? src + (r0 + r) * ld + c : src, ok);
  }
}

// This lane's ldmatrix row pointer for the A fragments of the warp's 16 rows of tile t.
template <class T, int D>
__device__ __forceinline__ const T* a_row(const T* t) {
  const int lane = threadIdx.x % 32;
  return t + ((threadIdx.x / 32) * kWarpRows + lane % 16) * kPitch<T, D> + (lane / 16) * kVec<T>;
}

template <class T, int AF>
__device__ __forceinline__ void load_afrags(uint32_t (&af)[AF][4], const T* arow) {
  if constexpr (AF > 1) {
#pragma unroll
    for (int kk = 0; kk < AF; ++kk) ldsm_x4(af[kk], arow + kk * kK<T>);
  }
}

// s = A B^T: A the warp's 16 rows (cached fragments af when AF = D / kK, else reloaded from
// arow), B the 8 NT rows of tile b: the warp's 16 x 8NT block of row dot products.
template <class T, int D, int AF, int NT>
__device__ __forceinline__ void dots(float (&s)[NT][4], const uint32_t (&af)[AF][4], const T* arow,
                                     const T* b) {
  const int lane = threadIdx.x % 32, mi = lane / 8, mr = lane % 8;
#pragma unroll
  for (int t = 0; t < NT; ++t) s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < D / kK<T>; ++kk) {
    uint32_t r[4];
    if constexpr (AF > 1) {
      static_assert(AF == D / kK<T>, "all fragments or none");
#pragma unroll
      for (int x = 0; x < 4; ++x) r[x] = af[kk][x];
    } else {
      ldsm_x4(r, arow + kk * kK<T>);
    }
    decltype(auto) a = a_operand<T>(r);
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {  // rows 16np.. of b as two 8-column B operands
      uint32_t f[4];
      ldsm_x4(f,
              b + (np * 16 + mr + 8 * (mi >> 1)) * kPitch<T, D> + kk * kK<T> + kVec<T> * (mi & 1));
      mma_op<T>(s[2 * np], a, f[0], f[1]);
      mma_op<T>(s[2 * np + 1], a, f[2], f[3]);
    }
  }
}

// acc += P B: P a warp's 16 x 8NT block in the accumulator layout (rounded to T here), B the
// 8NT x D rows of tile b.
template <class T, int D, int NT>
__device__ __forceinline__ void accumulate(float (&acc)[D / 8][4], const float (&p)[NT][4],
                                           const T* b) {
  const int lane = threadIdx.x % 32, mi = lane / 8, mr = lane % 8;
  if constexpr (kTf32<T>) {
    // An 8-key step is accumulator tile kk; its k order is free as long as A and B agree.
    // k = t is key 2t and k = t + 4 key 2t + 1, so the A fragment is (c0, c2, c1, c3) of the
    // tile (no shuffles) and B is two scalar loads, B[2t][g] and B[2t + 1][g]: banks 8t + g
    // and 8t + 4 + g (pitch D + 4 = 4 mod 32), conflict-free. (ldmatrix.trans cannot
    // transpose 32-bit elements.)
    const float* bl = b + (2 * (lane % 4)) * kPitch<T, D> + lane / 4;
#pragma unroll
    for (int kk = 0; kk < NT; ++kk) {
      const uint32_t r[4] = {f_bits(p[kk][0]), f_bits(p[kk][2]), f_bits(p[kk][1]),
                             f_bits(p[kk][3])};
      const Tf32A a = a_operand<T>(r);
      const float* bk = bl + kk * 8 * kPitch<T, D>;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        mma_op<T>(acc[dt], a, f_bits(bk[dt * 8]), f_bits(bk[kPitch<T, D> + dt * 8]));
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < NT / 2; ++kk) {  // P columns 16kk.. = accumulator tiles 2kk, 2kk + 1
      const uint32_t a[4] = {pack2<T>(p[2 * kk][0], p[2 * kk][1]),
                             pack2<T>(p[2 * kk][2], p[2 * kk][3]),
                             pack2<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
                             pack2<T>(p[2 * kk + 1][2], p[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {  // columns 16dp.. as two 8-column B operands
        uint32_t f[4];
        ldsm_x4_trans(f,
                      b + (kk * 16 + mr + 8 * (mi & 1)) * kPitch<T, D> + dp * 16 + 8 * (mi >> 1));
        mma16816<T>(acc[2 * dp], a, f[0], f[1]);
        mma16816<T>(acc[2 * dp + 1], a, f[2], f[3]);
      }
    }
  }
}

template <int D>
__device__ __forceinline__ void zero(float (&acc)[D / 8][4]) {
#pragma unroll
  for (int t = 0; t < D / 8; ++t) acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.f;
}

template <class T>
__device__ __forceinline__ void store2(T* p, float x0, float x1) {
  if constexpr (kTf32<T>)
    *reinterpret_cast<float2*>(p) = make_float2(x0, x1);
  else
    *reinterpret_cast<uint32_t*>(p) = pack2<T>(x0, x1);
}

// Writes a warp's 16 x D accumulators, row h (of this lane's two) times mul[h], to rows
// row[h] < nrows of a (nrows, width) T matrix with rows ld elements apart.
template <class T, int D>
__device__ __forceinline__ void write_rows(const float (&acc)[D / 8][4], T* dst,
                                           const int (&row)[2], int nrows, int width,
                                           int64_t ld, const float (&mul)[2]) {
  const int tq = threadIdx.x % 4;
  // A lane's two adjacent columns as one store (32 bits, float: 64) where every row start is
  // aligned to it.
  const bool pairs =
      width % 2 == 0 && ld % 2 == 0 && reinterpret_cast<uintptr_t>(dst) % (2 * sizeof(T)) == 0;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    if (row[h] >= nrows) continue;
    T* out = dst + row[h] * ld;
#pragma unroll
    for (int t = 0; t < D / 8; ++t) {
      const int c = t * 8 + 2 * tq;
      const float x0 = acc[t][2 * h] * mul[h], x1 = acc[t][2 * h + 1] * mul[h];
      if (pairs) {
        if (c < width) store2<T>(out + c, x0, x1);
      } else {
        if (c < width) out[c] = from_f<T>(x0);
        if (c + 1 < width) out[c + 1] = from_f<T>(x1);
      }
    }
  }
}

// Blocks run tile-major (block x = tile * N + n), heaviest tiles first so that the last wave
// is short: under a causal mask the last query tiles see the most keys (forward, dQ).
__device__ __forceinline__ int query_tile(int tiles, int64_t N) {
  return tiles - 1 - static_cast<int>(blockIdx.x / N);
}

// This lane's two rows of the warp's 16: r0 + warp * 16 + l/4, + 8.
__device__ __forceinline__ void lane_rows(int (&row)[2], int r0) {
  row[0] = r0 + (threadIdx.x / 32) * kWarpRows + (threadIdx.x % 32) / 4;
  row[1] = row[0] + 8;
}

// The key (column) of element e of accumulator tile t in a block starting at key c0.
__device__ __forceinline__ int col_of(int c0, int t, int e) {
  return c0 + t * 8 + 2 * (threadIdx.x % 4) + (e & 1);
}

struct Vec {
  bool q, k, v, g;  // 16-byte cp.async copies for each input (see async_tile)
};

// Step it of a double-buffered stream of ntiles tiles: once every thread is done with the
// other buffer (read in step it - 1), issue(b) starts the copies of tile it + 1 into it, then
// this waits for tile it's copies and makes them visible to the block.
template <class F>
__device__ __forceinline__ void stream_step(int it, int ntiles, F&& issue) {
  __syncthreads();
  if (it + 1 < ntiles) {
    issue((it + 1) & 1);
    cp_async_commit();
    cp_async_wait<1>();
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
}

// K and V rows [j0, j0 + 64) into buffer b of kv (K at kv + 2b * 64 * kPitch, V after it).
template <class T, int D>
__device__ __forceinline__ void issue_kv(T* kv, int b, const T* kn, const T* vn, int j0,
                                         const MmaGeom& g, const Vec& vec) {
  T* t = kv + b * 2 * kTile * kPitch<T, D>;
  async_tile<T, D>(t, kn, g.E, g.k.row, vec.k, j0, g.S);
  async_tile<T, D>(t + kTile * kPitch<T, D>, vn, g.Ev, g.v.row, vec.v, j0, g.S);
}

// Dropout on a thread's NT x 4 fragment of scores (Note [Attention dropout mask] in
// kernels/random_math.h): calls f(t, e, factor) for each element, factor 0 (dropped) or the
// 1 / (1 - p) scale, one Philox call per four elements. The fragment's rows are r0 and r0 + 8
// (r0 % 16 < 8) and its columns col_of(c0, t, e) (c0 % 16 == 0, NT even); rows are queries and
// columns keys, or, with keys_rows (the dK/dV pass's transposed scores), the other way round.
// Callers test g.drop_threshold first.
template <int NT, class F>
__device__ __forceinline__ void for_each_drop(const MmaGeom& g, int64_t n, int r0, int c0,
                                              bool keys_rows, F&& f) {
  const uint64_t GL = rng::attention_drop_groups(static_cast<uint64_t>(g.L));
  const uint64_t GS = rng::attention_drop_groups(static_cast<uint64_t>(g.S));
#pragma unroll
  for (int t = 0; t < NT; t += 2)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      // (r0, c) is the group's first element: bit 3 of both is clear.
      const int c = col_of(c0, t, e);
      const uint64_t i = static_cast<uint64_t>(keys_rows ? c : r0);
      const uint64_t j = static_cast<uint64_t>(keys_rows ? r0 : c);
      const rng::Philox4x32 w = rng::philox4x32_10(
          rng::attention_drop_block(static_cast<uint64_t>(n), i, j, GL, GS), g.drop_offset,
          g.drop_seed);
      auto factor = [&](int word) {
        return rng::dropout_keep(w[word], g.drop_threshold) ? g.drop_scale : 0.f;
      };
      // Word ((i >> 3) & 1) * 2 + ((j >> 3) & 1): column + 8 is tile t + 1, row + 8 is e + 2.
      f(t, e, factor(0));
      f(t + 1, e, factor(keys_rows ? 2 : 1));
      f(t, e + 2, factor(keys_rows ? 1 : 2));
      f(t + 1, e + 2, factor(3));
    }
}

// Q, then two (K, V) buffers.
template <class T, int D>
constexpr size_t kFwdSmem = 5 * kTile* kPitch<T, D> * sizeof(T);

// Blocks per SM: the most the registers allow without spills (float: and shared memory).
template <class T, int D>
constexpr int kFwdBlocks = D <= 64 ? (kTf32<T> ? 2 : 3) : 1;

template <class T, int D>
__global__ void __launch_bounds__(kThreads, kFwdBlocks<T, D>)
    mma_fwd(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
            T* __restrict__ out, float* __restrict__ lse, MmaGeom g, float scale_log2, int tiles,
            Vec vec) {
  if (g.drop_threshold) rng::resolve_philox(g.drop_seed, g.drop_offset);  // Note [Graph-safe RNG]
  constexpr int HP = kPitch<T, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* kv = qs + kTile * HP;  // buffer b: K at kv + 2b * kTile * HP, V after it
  const int64_t n = blockIdx.x % g.N;
  const int i0 = query_tile(tiles, g.N) * kTile;
  const T* kn = k + g.k.at(n, g.H);
  const T* vn = v + g.v.at(n, g.H);
  const int kend = g.causal ? min(g.S, i0 + kTile) : g.S;  // keys this block's rows see
  const int ntiles = (kend + kTile - 1) / kTile;
  async_tile<T, D>(qs, q + g.q.at(n, g.H), g.E, g.q.row, vec.q, i0, g.L);
  issue_kv<T, D>(kv, 0, kn, vn, 0, g, vec);
  cp_async_commit();
  int row[2];
  lane_rows(row, i0);
  const int wr = row[0] - (threadIdx.x % 32) / 4;  // the warp's first row
  const T* qa = a_row<T, D>(qs);
  uint32_t qf[kAF<T, D>][4];
  float o[D / 8][4];
  zero<D>(o);
  float m[2] = {kNegInf, kNegInf}, l[2] = {0.f, 0.f};  // log2 units; l is this lane's part
  for (int it = 0; it < ntiles; ++it) {
    const int j0 = it * kTile;
    const T* ks = kv + (it & 1) * 2 * kTile * HP;
    const T* vs = ks + kTile * HP;
    stream_step(it, ntiles, [&](int b) { issue_kv<T, D>(kv, b, kn, vn, j0 + kTile, g, vec); });
    if (it == 0) load_afrags<T>(qf, qa);
    float s[kNT][4];
    dots<T, D>(s, qf, qa, ks);
    // A tile every row of the warp sees whole needs no mask.
    const bool full = j0 + kTile <= g.S && (!g.causal || j0 + kTile - 1 <= wr);
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int t = 0; t < kNT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float x = s[t][e] * scale_log2;
        if (!full && !sees(g, row[e / 2], col_of(j0, t, e))) x = kNegInf;
        s[t][e] = x;
        mx[e / 2] = fmaxf(mx[e / 2], x);
      }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(kFull, mx[h], 2));
      base[h] = mx[h] == kNegInf ? 0.f : mx[h];  // a row with nothing visible yet
      const float alpha = exp2_sfu(m[h] - base[h]);
      m[h] = mx[h];
      l[h] *= alpha;
#pragma unroll
      for (int t = 0; t < D / 8; ++t) {
        o[t][2 * h] *= alpha;
        o[t][2 * h + 1] *= alpha;
      }
    }
#pragma unroll
    for (int t = 0; t < kNT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float p = exp2_sfu(s[t][e] - base[e / 2]);
        l[e / 2] += p;
        s[t][e] = p;
      }
    if (g.drop_threshold)
      for_each_drop<kNT>(g, n, row[0], j0, false, [&](int t, int e, float f) { s[t][e] *= f; });
    accumulate<T, D>(o, s, vs);
  }
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l[h] += __shfl_xor_sync(kFull, l[h], 1);
    l[h] += __shfl_xor_sync(kFull, l[h], 2);
    inv[h] = l[h] > 0.f ? 1.f / l[h] : 0.f;
    if (row[h] < g.L && threadIdx.x % 4 == 0)
      lse[n * g.L + row[h]] = l[h] > 0.f ? (m[h] + log2f(l[h])) * kLn2 : kNegInf;
  }
  write_rows<T, D>(o, out + g.o.at(n, g.H), row, g.L, g.Ev, g.o.row, inv);
}

// Backward shared memory: the block's two resident tiles, two buffers of the two streamed
// tiles, and (dK/dV pass) two buffers of the streamed queries' lse and D rows.
template <class T, int D>
constexpr size_t kBwdSmem = 6 * kTile* kPitch<T, D> * sizeof(T) + 2 * 2 * kTile * 4;

template <class T, int D>
constexpr int kBwdBlocks = D <= 64 ? 2 : 1;

template <class T, int D>
__global__ void __launch_bounds__(kThreads, kBwdBlocks<T, D>)
    mma_bwd_dkdv(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                 const T* __restrict__ go, const float* __restrict__ lse,
                 const float* __restrict__ dd, T* __restrict__ dk, T* __restrict__ dv, MmaGeom g,
                 float scale_log2, int tiles, Vec vec) {
  if (g.drop_threshold) rng::resolve_philox(g.drop_seed, g.drop_offset);  // Note [Graph-safe RNG]
  constexpr int HP = kPitch<T, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* ks = reinterpret_cast<T*>(smem);
  T* vs = ks + kTile * HP;
  T* qg = vs + kTile * HP;  // buffer b: Q at qg + 2b * kTile * HP, dO after it
  float* rows = reinterpret_cast<float*>(qg + 4 * kTile * HP);  // buffer b: lse, D at 2b * 64
  const int64_t n = blockIdx.x % g.N;
  const int j0 = static_cast<int>(blockIdx.x / g.N) * kTile;  // causal: the most queries first
  const T* qn = q + g.q.at(n, g.H);
  const T* gn = go + g.go.at(n, g.H);
  // Causal: queries before the key tile see none of its keys (tiles of both are 64 rows).
  const int ibeg = g.causal ? j0 : 0;
  const int ntiles = ibeg < g.L ? (g.L - ibeg + kTile - 1) / kTile : 0;
  // Queries [i0, i0 + 64) into buffer b: Q and dO by cp.async, lse (log2 units) and D plainly.
  auto issue = [&](int b, int i0) {
    T* t = qg + b * 2 * kTile * HP;
    async_tile<T, D>(t, qn, g.E, g.q.row, vec.q, i0, g.L);
    async_tile<T, D>(t + kTile * HP, gn, g.Ev, g.go.row, vec.g, i0, g.L);
    for (int x = threadIdx.x; x < kTile; x += kThreads) {
      const bool in = i0 + x < g.L;
      rows[b * 2 * kTile + x] = in ? lse[n * g.L + i0 + x] * kLog2e : 0.f;
      rows[b * 2 * kTile + kTile + x] = in ? dd[n * g.L + i0 + x] : 0.f;
    }
  };
  async_tile<T, D>(ks, k + g.k.at(n, g.H), g.E, g.k.row, vec.k, j0, g.S);
  async_tile<T, D>(vs, v + g.v.at(n, g.H), g.Ev, g.v.row, vec.v, j0, g.S);
  if (ntiles > 0) issue(0, ibeg);
  cp_async_commit();
  int row[2];
  lane_rows(row, j0);  // this lane's two keys
  const int wr = row[0] - (threadIdx.x % 32) / 4;
  const T* ka = a_row<T, D>(ks);
  const T* va = a_row<T, D>(vs);
  uint32_t kf[1][4], vf[1][4];  // not cached: the dK/dV accumulators need the registers
  // At D = 128 the two 16 x D accumulators leave room for scores of only 32 queries at a time.
  constexpr int kParts = D > 64 ? 2 : 1;
  float dka[D / 8][4], dva[D / 8][4];
  zero<D>(dka);
  zero<D>(dva);
  for (int it = 0; it < ntiles; ++it) {
    const int i0 = ibeg + it * kTile;
    const T* qs = qg + (it & 1) * 2 * kTile * HP;
    const T* gs = qs + kTile * HP;
    const float* ls = rows + (it & 1) * 2 * kTile;
    const float* drow = ls + kTile;
    stream_step(it, ntiles, [&](int b) { issue(b, i0 + kTile); });
    // Every query of the tile is real and sees every key of the warp: no mask.
    const bool full = i0 + kTile <= g.L && (!g.causal || i0 >= wr + kWarpRows - 1);
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      const int c0 = part * kTile / kParts;  // this part's first query in the tile
      float s[kNT / kParts][4], dp[kNT / kParts][4];
      dots<T, D>(s, kf, ka, qs + c0 * HP);   // S^T: keys x queries
      dots<T, D>(dp, vf, va, gs + c0 * HP);  // dP^T
#pragma unroll
      for (int t = 0; t < kNT / kParts; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int c = col_of(c0, t, e);
          const float p =
              full || sees(g, i0 + c, row[e / 2]) ? exp2_sfu(s[t][e] * scale_log2 - ls[c]) : 0.f;
          s[t][e] = p;
          if (!g.drop_threshold) dp[t][e] = p * (dp[t][e] - drow[c]);
        }
      if (g.drop_threshold)
        for_each_drop<kNT / kParts>(g, n, row[0], i0 + c0, true, [&](int t, int e, float f) {
          const float p = s[t][e];
          s[t][e] = p * f;
          dp[t][e] = p * (f * dp[t][e] - drow[col_of(c0, t, e)]);
        });
      accumulate<T, D>(dva, s, gs + c0 * HP);   // dV += P^T dO
      accumulate<T, D>(dka, dp, qs + c0 * HP);  // dK += dS^T Q
    }
  }
  cp_async_wait<0>();  // nothing in flight at exit (no query tiles: K and V were never waited)
  const float ks_mul[2] = {g.scale, g.scale}, one[2] = {1.f, 1.f};
  write_rows<T, D>(dka, dk + g.dk.at(n, g.H), row, g.S, g.E, g.dk.row, ks_mul);
  write_rows<T, D>(dva, dv + g.dv.at(n, g.H), row, g.S, g.Ev, g.dv.row, one);
}

template <class T, int D>
__global__ void __launch_bounds__(kThreads, kBwdBlocks<T, D>)
    mma_bwd_dq(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               const T* __restrict__ go, const float* __restrict__ lse,
               const float* __restrict__ dd, T* __restrict__ dq, MmaGeom g, float scale_log2,
               int tiles, Vec vec) {
  if (g.drop_threshold) rng::resolve_philox(g.drop_seed, g.drop_offset);  // Note [Graph-safe RNG]
  constexpr int HP = kPitch<T, D>;
  extern __shared__ __align__(128) unsigned char smem[];
  T* qs = reinterpret_cast<T*>(smem);
  T* gs = qs + kTile * HP;
  T* kv = gs + kTile * HP;  // buffer b: K at kv + 2b * kTile * HP, V after it
  const int64_t n = blockIdx.x % g.N;
  const int i0 = query_tile(tiles, g.N) * kTile;
  const T* kn = k + g.k.at(n, g.H);
  const T* vn = v + g.v.at(n, g.H);
  const int kend = g.causal ? min(g.S, i0 + kTile) : g.S;
  const int ntiles = (kend + kTile - 1) / kTile;
  async_tile<T, D>(qs, q + g.q.at(n, g.H), g.E, g.q.row, vec.q, i0, g.L);
  async_tile<T, D>(gs, go + g.go.at(n, g.H), g.Ev, g.go.row, vec.g, i0, g.L);
  issue_kv<T, D>(kv, 0, kn, vn, 0, g, vec);
  cp_async_commit();
  int row[2];
  lane_rows(row, i0);
  const int wr = row[0] - (threadIdx.x % 32) / 4;
  float li[2], di[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const bool in = row[h] < g.L;
    li[h] = in ? lse[n * g.L + row[h]] * kLog2e : 0.f;
    di[h] = in ? dd[n * g.L + row[h]] : 0.f;
  }
  const T* qa = a_row<T, D>(qs);
  const T* ga = a_row<T, D>(gs);
  uint32_t qf[kAF<T, D>][4], gf[kAF<T, D>][4];
  float dqa[D / 8][4];
  zero<D>(dqa);
  for (int it = 0; it < ntiles; ++it) {
    const int j0 = it * kTile;
    const T* ks = kv + (it & 1) * 2 * kTile * HP;
    const T* vs = ks + kTile * HP;
    stream_step(it, ntiles, [&](int b) { issue_kv<T, D>(kv, b, kn, vn, j0 + kTile, g, vec); });
    if (it == 0) {
      load_afrags<T>(qf, qa);
      load_afrags<T>(gf, ga);
    }
    float s[kNT][4], dp[kNT][4];
    dots<T, D>(s, qf, qa, ks);   // S
    dots<T, D>(dp, gf, ga, vs);  // dP
    const bool full = j0 + kTile <= g.S && (!g.causal || j0 + kTile - 1 <= wr);
#pragma unroll
    for (int t = 0; t < kNT; ++t)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int h = e / 2;
        const float p = full || sees(g, row[h], col_of(j0, t, e))
                            ? exp2_sfu(s[t][e] * scale_log2 - li[h])
                            : 0.f;
        s[t][e] = g.drop_threshold ? p : p * (dp[t][e] - di[h]);
      }
    if (g.drop_threshold)
      for_each_drop<kNT>(g, n, row[0], j0, false, [&](int t, int e, float f) {
        s[t][e] *= f * dp[t][e] - di[e / 2];
      });
    accumulate<T, D>(dqa, s, ks);  // dQ += dS K
  }
  const float mul[2] = {g.scale, g.scale};
  write_rows<T, D>(dqa, dq + g.dq.at(n, g.H), row, g.L, g.E, g.dq.row, mul);
}

// Calls f(std::integral_constant<int, D>) for the padded head dim D >= max(E, Ev).
template <class F>
cudaError_t dispatch_head_dim(const MmaGeom& g, F&& f) {
  const int e = g.E > g.Ev ? g.E : g.Ev;
  if (e <= 32) return f(std::integral_constant<int, 32>{});
  if (e <= 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});
}

// Whether every row of an operand starts 16-byte aligned and its width is whole 16-byte chunks.
template <class T>
bool vec_ok(const T* p, int width, const MmaLayout& l) {
  return width % kVec<T> == 0 && l.row % kVec<T> == 0 && l.b % kVec<T> == 0 &&
         l.h % kVec<T> == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Grid of N * ceil(rows / 64) blocks, all in x (N can pass 65535); false if too many.
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
  const Vec vec{vec_ok(q, g.E, g.q), vec_ok(k, g.E, g.k), vec_ok(v, g.Ev, g.v), false};
  const float scale_log2 = g.scale * kLog2e;
  return dispatch_head_dim(g, [&](auto d) {
    constexpr int D = decltype(d)::value;
    constexpr size_t smem = kFwdSmem<T, D>;
    const auto kernel = mma_fwd<T, D>;
    const cudaError_t e = allow_smem(kernel, smem);
    if (e != cudaSuccess) return e;
    kernel<<<blocks, kThreads, smem, st>>>(q, k, v, out, lse, g, scale_log2, tiles, vec);
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
  const Vec vec{vec_ok(q, g.E, g.q), vec_ok(k, g.E, g.k), vec_ok(v, g.Ev, g.v),
                vec_ok(gout, g.Ev, g.go)};
  const float scale_log2 = g.scale * kLog2e;
  return dispatch_head_dim(g, [&](auto d) {
    constexpr int D = decltype(d)::value;
    const auto dkdv = mma_bwd_dkdv<T, D>;
    const auto dqk = mma_bwd_dq<T, D>;
    constexpr size_t smem = kBwdSmem<T, D>;
    cudaError_t e = allow_smem(dkdv, smem);
    if (e == cudaSuccess) e = allow_smem(dqk, smem);
    if (e != cudaSuccess) return e;
    dkdv<<<kblocks, kThreads, smem, st>>>(q, k, v, gout, lse, dd, dk, dv, g, scale_log2, ktiles,
                                          vec);
    e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    dqk<<<qblocks, kThreads, smem, st>>>(q, k, v, gout, lse, dd, dq, g, scale_log2, qtiles, vec);
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
TS_MMA_INSTANTIATE(float)
#undef TS_MMA_INSTANTIATE

}  // namespace ts::cuda
