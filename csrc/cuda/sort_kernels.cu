// CUDA sort/argsort/topk through cub::DeviceSegmentedRadixSort. Note [CUDA sort]: each element
// becomes the CPU's unsigned sort key (Note [Sort keys] in cpu/sort_kernels.cpp: NaN largest,
// -0.0 and 0.0 equal), inverted for descending; (key, index) pairs are radix-sorted per row
// (stable), and the values are then gathered from the input by the sorted indices, so they
// keep their exact bits (signed zeros too). topk is the first k of that order; searchsorted
// binary-searches the same keys.
#include <cub/device/device_segmented_radix_sort.cuh>

#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/copy.h"
#include "ops/sort.h"
#include "ops/views.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

template <class T>
struct KeyOf {
  using type = ::cuda::std::conditional_t<
      sizeof(T) == 1, uint8_t,
      ::cuda::std::conditional_t<sizeof(T) == 2, uint16_t,
                                 ::cuda::std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
};
template <class T>
using key_t = typename KeyOf<T>::type;

template <class T>
__device__ __forceinline__ key_t<T> to_key(T v) {
  using U = key_t<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (::cuda::std::is_same_v<T, bool>) {
    return static_cast<U>(v);
  } else if constexpr (::cuda::std::is_unsigned_v<T>) {
    return v;
  } else if constexpr (::cuda::std::is_integral_v<T>) {
    return static_cast<U>(v) ^ sign;
  } else {
    const auto f = dconvert<dacc_t<T>>(v);
    if (f != f) return static_cast<U>(~U(0));
    if (f == 0) return sign;
    U u;
    memcpy(&u, &v, sizeof(T));
    return (u & sign) ? static_cast<U>(~u) : static_cast<U>(u | sign);
  }
}

template <class T>
__global__ void make_keys(const T* x, key_t<T>* keys, int64_t* idx, int64_t rows, int64_t n,
                          bool descending) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * n) return;
  const key_t<T> k = to_key(x[i]);
  keys[i] = descending ? static_cast<key_t<T>>(~k) : k;
  idx[i] = i % n;
}

// values[r, j] = x[r, idx[r, j]] for j < k (rows of length n in x and idx, k in the outputs).
template <class T>
__global__ void gather_rows(const T* x, const int64_t* idx, T* values, int64_t* indices,
                            int64_t rows, int64_t n, int64_t k) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * k) return;
  const int64_t r = i / k, j = i % k;
  const int64_t src = idx[r * n + j];
  if (values) values[i] = x[r * n + src];
  if (indices) indices[i] = src;
}

__global__ void row_offsets(int64_t* off, int64_t rows, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i <= rows) off[i] = i * n;
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

Tensor scratch(int64_t bytes, Device d) { return Tensor::empty(Shape{bytes}, DType::UInt8, d); }

// Sorts each row of x (last axis) and writes the first k of every row's order.
void sort_rows(const Tensor& x, const Tensor* values, const Tensor* indices, int64_t k,
               bool descending) {
  const Tensor xc = contiguous(x);
  const int64_t n = x.ndim() ? x.dim(x.ndim() - 1) : 1;
  const int64_t rows = n ? x.numel() / n : 0;
  if (rows == 0 || n == 0 || k == 0) return;
  const Device d = x.device();
  cudaStream_t s = current_stream(d.index);
  cuda_visit<kRealSet | kBoolSet>(x.dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = key_t<T>;
    const int64_t total = rows * n;
    Tensor keys = scratch(total * sizeof(K), d), keys_out = scratch(total * sizeof(K), d);
    Tensor idx = Tensor::empty(Shape{total}, DType::Int64, d);
    Tensor idx_out = Tensor::empty(Shape{total}, DType::Int64, d);
    Tensor off = Tensor::empty(Shape{rows + 1}, DType::Int64, d);
    make_keys<T><<<blocks(total), kBlock, 0, s>>>(reinterpret_cast<const T*>(xc.data_ptr()),
                                                  reinterpret_cast<K*>(keys.data_ptr()),
                                                  idx.data<int64_t>(), rows, n, descending);
    row_offsets<<<blocks(rows + 1), kBlock, 0, s>>>(off.data<int64_t>(), rows, n);
    TS_CUDA_CHECK_LAUNCH();
    TS_CHECK(total <= INT32_MAX, NotImplementedError,
             "sort: CUDA sorts of 2**31 or more elements are not supported yet");
    size_t temp_bytes = 0;
    const int64_t* o = off.data<int64_t>();
    TS_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
        nullptr, temp_bytes, reinterpret_cast<const K*>(keys.data_ptr()),
        reinterpret_cast<K*>(keys_out.data_ptr()), idx.data<int64_t>(), idx_out.data<int64_t>(),
        static_cast<int>(total), static_cast<int>(rows), o, o + 1, 0, 8 * sizeof(K), s));
    Tensor temp = scratch(static_cast<int64_t>(temp_bytes), d);
    TS_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
        temp.data_ptr(), temp_bytes, reinterpret_cast<const K*>(keys.data_ptr()),
        reinterpret_cast<K*>(keys_out.data_ptr()), idx.data<int64_t>(), idx_out.data<int64_t>(),
        static_cast<int>(total), static_cast<int>(rows), o, o + 1, 0, 8 * sizeof(K), s));
    // Contiguous results first, then copied into the (possibly strided) outputs.
    Shape rk = x.shape();
    rk[rk.size() - 1] = k;
    Tensor v = values ? Tensor::empty(rk, x.dtype(), d) : Tensor();
    Tensor i = indices ? Tensor::empty(rk, DType::Int64, d) : Tensor();
    gather_rows<T><<<blocks(rows * k), kBlock, 0, s>>>(
        reinterpret_cast<const T*>(xc.data_ptr()), idx_out.data<int64_t>(),
        values ? reinterpret_cast<T*>(v.data_ptr()) : nullptr,
        indices ? i.data<int64_t>() : nullptr, rows, n, k);
    TS_CUDA_CHECK_LAUNCH();
    if (values) copy_(*values, v);
    if (indices) copy_(*indices, i);
  });
}

void sort_cuda(const Tensor& x, const Tensor* values, const Tensor* indices, bool descending) {
  const int64_t n = x.ndim() ? x.dim(x.ndim() - 1) : 1;
  sort_rows(x, values, indices, n, descending);
}

void topk_cuda(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t k,
               bool largest) {
  sort_rows(x, &values, &indices, k, largest);
}

// out[i] = first j with key(sorted[j]) > key(v[i]) (right) or >= (left): a binary search per
// value over the CPU's sort keys, so NaN and signed zeros place exactly as on the CPU.
template <class T>
__global__ void searchsorted_kernel(const T* sorted, int64_t n, const T* v, int64_t m, int64_t* out,
                                    bool right) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const key_t<T> k = to_key(v[i]);
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const key_t<T> km = to_key(sorted[mid]);
    if (right ? km <= k : km < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  out[i] = lo;
}

void searchsorted_cuda(const Tensor& sorted, const Tensor& v, const Tensor& out, bool right) {
  const int64_t m = v.numel();
  if (m == 0) return;
  cudaStream_t s = current_stream(v.device().index);
  cuda_visit<kRealSet | kBoolSet>(sorted.dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    searchsorted_kernel<T><<<blocks(m), kBlock, 0, s>>>(
        reinterpret_cast<const T*>(sorted.data_ptr()), sorted.numel(),
        reinterpret_cast<const T*>(v.data_ptr()), m, out.data<int64_t>(), right);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(sort_stub, CUDA, &sort_cuda);
TS_REGISTER_KERNEL(searchsorted_stub, CUDA, &searchsorted_cuda);
TS_REGISTER_KERNEL(topk_stub, CUDA, &topk_cuda);

}  // namespace ts::cuda
