// Shared pieces of the row-wise fused nn kernels (softmax, layer norm, cross entropy):
// Note [CUDA row kernels]: rows of up to 1024 elements get one warp each (several rows per
// block, blockDim (32, kWarpRows)), the row held in registers, E elements per lane read as
// V-wide vectors when the row length and pointers allow; longer rows get a block each and
// re-read the row from global memory (L2) for each pass. Reductions are butterflies
// (__shfl_xor), so every lane ends with the same bits and results do not depend on timing.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/std/cmath>
#include <cuda/std/limits>
#include <type_traits>

#include "core/tensor.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"

namespace ts::cuda::rows {

constexpr int kWarpRows = 4;        // rows per block in the warp-per-row kernels
constexpr int kMaxWarpCols = 1024;  // longest row held in registers (32 per lane)
constexpr int kRowBlock = 512;      // threads of a block-per-row kernel

template <class A>
struct SumOp {
  __device__ __forceinline__ A operator()(A a, A b) const { return a + b; }
  static __device__ __forceinline__ A identity() { return A(0); }
};
// NaN-propagating max, as the CPU kernels' max2.
template <class A>
struct MaxOp {
  __device__ __forceinline__ A operator()(A a, A b) const { return b > a || b != b ? b : a; }
  static __device__ __forceinline__ A identity() {
    return -::cuda::std::numeric_limits<A>::infinity();
  }
};

template <class A, class Op>
__device__ __forceinline__ A warp_allreduce(A v, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// All threads of a 1-D block of kRowBlock threads get the reduction of their v.
template <class A, class Op>
__device__ __forceinline__ A block_allreduce(A v, Op op) {
  __shared__ A partial[kRowBlock / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_allreduce(v, op);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < kRowBlock / 32 ? partial[lane] : Op::identity();
  v = warp_allreduce(v, op);
  __syncthreads();  // `partial` may be reused by the next reduction
  return v;
}

template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Lane `lane`'s E elements of a row of n <= kMaxWarpCols (32-bit indices; V-wide chunks c = k * 32
// + lane at c * V; n is a multiple of V when V > 1). Elements past n read as `pad`.
template <class T, int E, int V, class A>
__device__ __forceinline__ void load_row(const T* row, int n, int lane, A (&out)[E], A pad) {
#pragma unroll
  for (int k = 0; k < E / V; ++k) {
    const int i = (k * 32 + lane) * V;
    if (i < n) {
      if constexpr (V > 1) {
        const Vec<T, V> vec = *reinterpret_cast<const Vec<T, V>*>(row + i);
#pragma unroll
        for (int j = 0; j < V; ++j) out[k * V + j] = dconvert<A>(vec.v[j]);
      } else {
        out[k] = dconvert<A>(row[i]);
      }
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) out[k * V + j] = pad;
    }
  }
}

template <class T, int E, int V, class A>
__device__ __forceinline__ void store_row(T* row, int n, int lane, const A (&in)[E]) {
#pragma unroll
  for (int k = 0; k < E / V; ++k) {
    const int i = (k * 32 + lane) * V;
    if (i < n) {
      if constexpr (V > 1) {
        Vec<T, V> vec;
#pragma unroll
        for (int j = 0; j < V; ++j) vec.v[j] = dconvert<T>(in[k * V + j]);
        *reinterpret_cast<Vec<T, V>*>(row + i) = vec;
      } else {
        row[i] = dconvert<T>(in[k]);
      }
    }
  }
}

// The element index of register slot s (k * V + j) of `lane`.
template <int V>
__device__ __forceinline__ int slot_index(int s, int lane) {
  return (s / V * 32 + lane) * V + s % V;
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls f(integral_constant<E>, integral_constant<V>) for a row of n <= kMaxWarpCols: E the
// smallest power of two with 32 * E >= n, V the 16-byte vector width when `vec_ok` (all
// pointers 16-byte aligned) and n is a multiple of it.
template <class T, class F>
void dispatch_warp_cols(int64_t n, bool vec_ok, F&& f) {
  constexpr int VW = sizeof(T) >= 16 ? 1 : static_cast<int>(16 / sizeof(T));
  const bool vec = vec_ok && VW > 1 && n % VW == 0;
  auto go = [&](auto e) {
    constexpr int E = decltype(e)::value;
    if constexpr (E >= VW && VW > 1) {
      if (vec) return f(e, std::integral_constant<int, VW>{});
    }
    return f(e, std::integral_constant<int, 1>{});
  };
  if (n <= 32) return go(std::integral_constant<int, 1>{});
  if (n <= 64) return go(std::integral_constant<int, 2>{});
  if (n <= 128) return go(std::integral_constant<int, 4>{});
  if (n <= 256) return go(std::integral_constant<int, 8>{});
  if (n <= 512) return go(std::integral_constant<int, 16>{});
  return go(std::integral_constant<int, 32>{});
}

// Grid of a block-per-row kernel (which strides over the rows past it).
inline unsigned row_block_grid(int64_t rows) {
  return static_cast<unsigned>(rows < (int64_t(1) << 30) ? rows : (int64_t(1) << 30));
}

template <class T>
const T* cptr(const Tensor* t) {
  return t ? reinterpret_cast<const T*>(t->data_ptr()) : nullptr;
}

inline unsigned warp_row_blocks(int64_t rows) {
  return static_cast<unsigned>((rows + kWarpRows - 1) / kWarpRows);
}

}  // namespace ts::cuda::rows
