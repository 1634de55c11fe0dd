// The CUDA elementwise launcher over ElementwiseIter's metadata (output first, byte strides,
// innermost dim first). Note [CUDA elementwise]: when every operand is contiguous or a
// broadcast scalar, each thread handles V (vec_width) neighbouring elements with one wide (up to
// 16-byte) load per contiguous operand; otherwise each element's byte offsets come from its
// linear index, divided in 32 bits when the element count allows. Operands that live in host
// memory (0-d CPU tensors mixed into a CUDA op, like Python scalars) travel by value in the
// kernel's parameters.
#pragma once
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "iter/tensor_iter.h"
#include "kernels/acc_type.h"

namespace ts::cuda {

constexpr int kMaxDims = 12;
constexpr int kBlock = 256;

template <int N>  // N operands, output first
struct ElemArgs {
  int ndim = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];  // bytes
  char* base[N];
  unsigned host_mask = 0;                       // operands passed by value
  alignas(16) unsigned char value[N][16] = {};  // their bytes
};

template <int N, class Index>
__device__ __forceinline__ void elem_offsets(const ElemArgs<N>& a, Index i, int64_t (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = 0; d < a.ndim; ++d) {
    const Index sz = static_cast<Index>(a.sizes[d]);
    const Index q = i / sz;
    const Index r = i - q * sz;
    i = q;
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] += static_cast<int64_t>(r) * a.strides[k][d];
  }
}

template <class T, int N>
__device__ __forceinline__ T load_operand(const ElemArgs<N>& a, int k, int64_t off) {
  if (a.host_mask & (1u << k)) return *reinterpret_cast<const T*>(a.value[k]);
  return *reinterpret_cast<const T*>(a.base[k] + off);
}

// f(acc inputs...) -> result; R is the output storage type, T the inputs' storage type.
template <class R, class T, int N, class Index, class F>
__global__ void __launch_bounds__(kBlock) elem_strided_kernel(ElemArgs<N> a, F f) {
  const Index i = static_cast<Index>(blockIdx.x) * kBlock + threadIdx.x;
  if (static_cast<int64_t>(i) >= a.numel) return;
  int64_t off[N];
  elem_offsets<N, Index>(a, i, off);
  using A = dacc_t<T>;
  if constexpr (N == 2) {
    const A x = dconvert<A>(load_operand<T>(a, 1, off[1]));
    *reinterpret_cast<R*>(a.base[0] + off[0]) = dconvert<R>(f(x));
  } else if constexpr (N == 3) {
    const A x = dconvert<A>(load_operand<T>(a, 1, off[1]));
    const A y = dconvert<A>(load_operand<T>(a, 2, off[2]));
    *reinterpret_cast<R*>(a.base[0] + off[0]) = dconvert<R>(f(x, y));
  } else {
    const A x = dconvert<A>(load_operand<T>(a, 1, off[1]));
    const A y = dconvert<A>(load_operand<T>(a, 2, off[2]));
    const A z = dconvert<A>(load_operand<T>(a, 3, off[3]));
    *reinterpret_cast<R*>(a.base[0] + off[0]) = dconvert<R>(f(x, y, z));
  }
}

// Elements a thread moves in the contiguous kernel: 4, or 8 when an operand or the result is a
// 16-bit or 8-bit type, so that 16-bit loads are 16 bytes wide (as PyTorch's vectorized
// elementwise kernels; 8-byte loads of bfloat16 reached about 60% of the bandwidth).
template <class R, class T>
constexpr int vec_width() {
  return (sizeof(T) <= 2 || sizeof(R) <= 2) ? 8 : 4;
}

template <class T, int V>
struct alignas(sizeof(T) * V) VecT {
  T v[V];
};

// Contiguous operands: thread t handles elements [t*V, t*V+V); `scalar_mask` marks
// operands broadcast from one element (stride 0), read once.
// Operands broadcast along one axis of a 2-D (inner `period` x outer) output: a row-broadcast
// one (a bias: strides (1, 0)) reads element i % period, a column-broadcast one (a per-row
// statistic: strides (0, 1)) reads i / period. Everything else is as in the plain kernel.
struct Broadcast2d {
  unsigned row_mask = 0, col_mask = 0;
  int64_t period = 1;
  bool row_vec = false;  // row-broadcast operands allow wide loads (period % V == 0, aligned)
};

template <class R, class T, int N, int V, class F>
__global__ void __launch_bounds__(kBlock)
    elem_contig_kernel(ElemArgs<N> a, unsigned scalar_mask, bool aligned, Broadcast2d bc, F f) {
  const int64_t i0 = (static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x) * V;
  if (i0 >= a.numel) return;
  using A = dacc_t<T>;
  A in[N][V];
  const bool full = aligned && i0 + V <= a.numel;
#pragma unroll
  for (int k = 1; k < N; ++k) {
    if (scalar_mask & (1u << k)) {
      const A v = dconvert<A>(load_operand<T>(a, k, 0));
#pragma unroll
      for (int j = 0; j < V; ++j) in[k][j] = v;
    } else if (bc.row_mask & (1u << k)) {
      const T* p = reinterpret_cast<const T*>(a.base[k]);
      if (full && bc.row_vec) {
        const VecT<T, V> v = *reinterpret_cast<const VecT<T, V>*>(p + i0 % bc.period);
#pragma unroll
        for (int j = 0; j < V; ++j) in[k][j] = dconvert<A>(v.v[j]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          in[k][j] = i0 + j < a.numel ? dconvert<A>(p[(i0 + j) % bc.period]) : A{};
      }
    } else if (bc.col_mask & (1u << k)) {
      const T* p = reinterpret_cast<const T*>(a.base[k]);
#pragma unroll
      for (int j = 0; j < V; ++j)
        in[k][j] = i0 + j < a.numel ? dconvert<A>(p[(i0 + j) / bc.period]) : A{};
    } else if (full) {
      const VecT<T, V> v = *reinterpret_cast<const VecT<T, V>*>(a.base[k] + i0 * sizeof(T));
#pragma unroll
      for (int j = 0; j < V; ++j) in[k][j] = dconvert<A>(v.v[j]);
    } else {
      const T* p = reinterpret_cast<const T*>(a.base[k]);
#pragma unroll
      for (int j = 0; j < V; ++j) in[k][j] = i0 + j < a.numel ? dconvert<A>(p[i0 + j]) : A{};
    }
  }
  R out[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    if constexpr (N == 2)
      out[j] = dconvert<R>(f(in[1][j]));
    else if constexpr (N == 3)
      out[j] = dconvert<R>(f(in[1][j], in[2][j]));
    else
      out[j] = dconvert<R>(f(in[1][j], in[2][j], in[3][j]));
  }
  R* o = reinterpret_cast<R*>(a.base[0]) + i0;
  if (full) {
    VecT<R, V> v;
#pragma unroll
    for (int j = 0; j < V; ++j) v.v[j] = out[j];
    *reinterpret_cast<VecT<R, V>*>(o) = v;
  } else {
#pragma unroll
    for (int j = 0; j < V; ++j)
      if (i0 + j < a.numel) o[j] = out[j];
  }
}

// Note [CUDA tiled iteration]: when an input's fastest dim is the output's second dim (a + a.T),
// a block stages a 32 x 32 tile of that input in shared memory, read along its own fast dim,
// so both the reads and the output's writes coalesce. For 2-D and batched (3-D) iterations.
constexpr int kTile = 32, kTileRows = 8;

template <class R, class T, int N, class F>
__global__ void __launch_bounds__(kTile* kTileRows)
    elem_tiled_kernel(ElemArgs<N> a, unsigned tmask, F f) {
  using A = dacc_t<T>;
  __shared__ alignas(16) unsigned char smem[(N - 1) * kTile * (kTile + 1) * sizeof(T)];
  auto tile = [&](int k, int r, int c) -> T& {
    return reinterpret_cast<T*>(smem)[((k - 1) * kTile + r) * (kTile + 1) + c];
  };
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int64_t n0 = a.sizes[0], n1 = a.sizes[1];
  int64_t z[N];
#pragma unroll
  for (int k = 0; k < N; ++k) z[k] = a.ndim > 2 ? blockIdx.z * a.strides[k][2] : 0;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int k = 1; k < N; ++k) {
    if (!(tmask & (1u << k))) continue;
    for (int r = ty; r < kTile; r += kTileRows) {
      const int64_t i = i0 + r, j = j0 + tx;
      if (i < n0 && j < n1)
        tile(k, r, tx) = load_operand<T>(a, k, z[k] + i * a.strides[k][0] + j * a.strides[k][1]);
    }
  }
  __syncthreads();
  const int64_t i = i0 + tx;
  if (i >= n0) return;
  for (int c = ty; c < kTile; c += kTileRows) {
    const int64_t j = j0 + c;
    if (j >= n1) break;
    A v[N];
#pragma unroll
    for (int k = 1; k < N; ++k)
      v[k] = dconvert<A>(
          (tmask & (1u << k))
              ? tile(k, tx, c)
              : load_operand<T>(a, k, z[k] + i * a.strides[k][0] + j * a.strides[k][1]));
    R* o = reinterpret_cast<R*>(a.base[0] + z[0] + i * a.strides[0][0] + j * a.strides[0][1]);
    if constexpr (N == 2)
      *o = dconvert<R>(f(v[1]));
    else if constexpr (N == 3)
      *o = dconvert<R>(f(v[1], v[2]));
    else
      *o = dconvert<R>(f(v[1], v[2], v[3]));
  }
}

// The inputs worth staging through shared-memory tiles (Note [CUDA tiled iteration]), or 0.
template <int N>
unsigned tiled_inputs(const ElemArgs<N>& a, size_t itemsize) {
  if (itemsize > 8 || (a.ndim != 2 && a.ndim != 3) || a.sizes[0] < 16 || a.sizes[1] < 16 ||
      a.sizes[1] > 65535LL * kTile || (a.ndim == 3 && a.sizes[2] > 65535))
    return 0;
  unsigned m = 0;
  for (int k = 1; k < N; ++k) {
    const int64_t s0 = a.strides[k][0] < 0 ? -a.strides[k][0] : a.strides[k][0];
    const int64_t s1 = a.strides[k][1] < 0 ? -a.strides[k][1] : a.strides[k][1];
    if (!(a.host_mask & (1u << k)) && s1 != 0 && s1 < s0) m |= 1u << k;
  }
  return m;
}

// True when `p` points to host memory (a 0-d CPU operand); costs a driver query, so it is only
// asked for operands broadcast from a single element.
bool is_host_pointer(const void* p);

template <int N>
ElemArgs<N> make_args(const ElementwiseIter& it, int in_itemsize, unsigned& scalar_mask,
                      bool& contiguous_like) {
  ElemArgs<N> a;
  TS_CHECK(it.shape.size() <= kMaxDims, RuntimeError, "CUDA elementwise: ", it.shape.size(),
           " dims remain after coalescing (at most ", kMaxDims, " are supported)");
  a.ndim = static_cast<int>(it.shape.size());
  a.numel = it.numel;
  for (int d = 0; d < a.ndim; ++d) a.sizes[d] = it.shape[d];
  scalar_mask = 0;
  contiguous_like = a.ndim <= 1;
  for (int k = 0; k < N; ++k) {
    a.base[k] = it.base[k];
    bool zero = true;
    for (int d = 0; d < a.ndim; ++d) {
      a.strides[k][d] = it.strides[k][d];
      zero = zero && it.strides[k][d] == 0;
    }
    if (k > 0 && zero) {
      scalar_mask |= 1u << k;
      if (is_host_pointer(it.base[k])) {
        a.host_mask |= 1u << k;
        memcpy(a.value[k], it.base[k], in_itemsize);
      }
    }
  }
  if (contiguous_like && a.ndim == 1) {
    // Contiguous means unit element strides; the output's itemsize may differ (bool results).
    for (int k = 1; k < N; ++k)
      if (!(scalar_mask & (1u << k)) && a.strides[k][0] != in_itemsize) contiguous_like = false;
  }
  return a;
}

// Whether a 2-D iteration has a contiguous output and operands that are contiguous, scalars,
// or broadcast along one axis (bias adds, per-row statistics): then the contiguous kernel
// runs with `bc` describing the broadcast operands instead of the strided one.
template <int N>
bool broadcast_2d(const ElemArgs<N>& a, int64_t out_size, int64_t in_size, unsigned scalar_mask,
                  int vec, Broadcast2d& bc) {
  if (a.ndim != 2) return false;
  const int64_t inner = a.sizes[0];
  if (a.strides[0][0] != out_size || a.strides[0][1] != out_size * inner) return false;
  for (int k = 1; k < N; ++k) {
    if (scalar_mask & (1u << k)) continue;
    const int64_t s0 = a.strides[k][0], s1 = a.strides[k][1];
    if (s0 == in_size && s1 == in_size * inner) continue;
    if (s0 == in_size && s1 == 0)
      bc.row_mask |= 1u << k;
    else if (s0 == 0 && s1 == in_size)
      bc.col_mask |= 1u << k;
    else
      return false;
  }
  if (!(bc.row_mask | bc.col_mask)) return false;
  bc.period = inner;
  bc.row_vec = inner % vec == 0;
  for (int k = 1; k < N; ++k)
    if (bc.row_mask & (1u << k))
      bc.row_vec = bc.row_vec && reinterpret_cast<uintptr_t>(a.base[k]) % (in_size * vec) == 0;
  return true;
}

template <class R, class T, int N, class F>
void launch_elementwise(const ElementwiseIter& it, F f) {
  if (it.numel == 0) return;
  unsigned scalar_mask;
  bool contig;
  ElemArgs<N> a = make_args<N>(it, sizeof(T), scalar_mask, contig);
  if (contig && a.ndim == 1 && a.strides[0][0] != static_cast<int64_t>(sizeof(R))) contig = false;
  const int dev = current_device();
  cudaStream_t s = current_stream(dev);
  Broadcast2d bc;
  constexpr int V = vec_width<R, T>();
  if (contig || broadcast_2d(a, sizeof(R), sizeof(T), scalar_mask, V, bc)) {
    bool aligned = reinterpret_cast<uintptr_t>(a.base[0]) % alignof(VecT<R, V>) == 0;
    for (int k = 1; k < N; ++k)
      if (!((scalar_mask | bc.row_mask | bc.col_mask) & (1u << k)))
        aligned = aligned && reinterpret_cast<uintptr_t>(a.base[k]) % alignof(VecT<T, V>) == 0;
    const int64_t threads = (a.numel + V - 1) / V;
    const unsigned grid = static_cast<unsigned>((threads + kBlock - 1) / kBlock);
    elem_contig_kernel<R, T, N, V><<<grid, kBlock, 0, s>>>(a, scalar_mask, aligned, bc, f);
  } else if (const unsigned tmask = tiled_inputs(a, sizeof(T))) {
    const dim3 grid(static_cast<unsigned>((a.sizes[0] + kTile - 1) / kTile),
                    static_cast<unsigned>((a.sizes[1] + kTile - 1) / kTile),
                    a.ndim > 2 ? static_cast<unsigned>(a.sizes[2]) : 1u);
    elem_tiled_kernel<R, T, N><<<grid, dim3(kTile, kTileRows), 0, s>>>(a, tmask, f);
  } else {
    const unsigned grid = static_cast<unsigned>((a.numel + kBlock - 1) / kBlock);
    if (a.numel <= INT32_MAX)
      elem_strided_kernel<R, T, N, uint32_t><<<grid, kBlock, 0, s>>>(a, f);
    else
      elem_strided_kernel<R, T, N, int64_t><<<grid, kBlock, 0, s>>>(a, f);
  }
  TS_CUDA_CHECK_LAUNCH();
}

// The output storage type for an op whose result on dacc_t<T> is Res: bool for predicates,
// the real type for complex -> real ops, else T (like the CPU's out_elem_t).
template <class T, class Res>
using dout_t = ::cuda::std::conditional_t<
    ::cuda::std::is_same_v<Res, bool>, bool,
    ::cuda::std::conditional_t<is_dcomplex_v<T> && !is_dcomplex_v<Res>, Res, T>>;

template <uint32_t Set, class F>
void cuda_unary(const ElementwiseIter& it, DType dt, const char* name, F f) {
  cuda_visit<Set>(dt, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = dout_t<T, decltype(f(dacc_t<T>()))>;
    launch_elementwise<R, T, 2>(it, f);
  });
}

template <uint32_t Set, class F>
void cuda_binary(const ElementwiseIter& it, DType dt, const char* name, F f) {
  cuda_visit<Set>(dt, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = dout_t<T, decltype(f(dacc_t<T>(), dacc_t<T>()))>;
    launch_elementwise<R, T, 3>(it, f);
  });
}

}  // namespace ts::cuda

// Defines op##_cuda over the dtypes of Set with functor fn::F and registers it in op##_stub.
#define TS_CUDA_UNARY(op, Set, F)                                                                \
  void op##_cuda(const ElementwiseIter& it, DType dt) { cuda_unary<Set>(it, dt, #op, fn::F{}); } \
  TS_REGISTER_KERNEL(op##_stub, CUDA, &op##_cuda);
#define TS_CUDA_BINARY(op, Set, F)                                                                \
  void op##_cuda(const ElementwiseIter& it, DType dt) { cuda_binary<Set>(it, dt, #op, fn::F{}); } \
  TS_REGISTER_KERNEL(op##_stub, CUDA, &op##_cuda);
