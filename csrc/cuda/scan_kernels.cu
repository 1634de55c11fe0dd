// CUDA kernels for cumulative_sum / cumulative_prod over the (outer, n, inner) layout of
// ScanArgs. Note [CUDA scan]: with inner == 1 each row is scanned by one block with
// cub::BlockScan over tiles of kBlock x kItems elements, the running prefix carried from tile to
// tile; with inner > 1 each thread owns one (outer, inner) column and walks n sequentially,
// neighbouring threads reading neighbouring columns (coalesced). Accumulators are dacc_t
// (float for float16/bfloat16), like the CPU's.
#include <cub/block/block_scan.cuh>

#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/cumulative.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

template <class T>
using dsum_t = ::cuda::std::conditional_t<
    ::cuda::std::is_same_v<T, bool> ||
        (::cuda::std::is_signed_v<T> && ::cuda::std::is_integral_v<T>),
    int64_t,
    ::cuda::std::conditional_t<::cuda::std::is_unsigned_v<T>&& ::cuda::std::is_integral_v<T>,
                               uint64_t, T>>;

template <class A, bool kProd>
struct ScanOp {
  __device__ __forceinline__ A operator()(const A& x, const A& y) const {
    if constexpr (kProd)
      return x * y;
    else
      return x + y;
  }
};

constexpr int kItems = 4;

template <class T, class R, bool kProd>
__global__ void __launch_bounds__(kBlock) scan_rows_kernel(ScanArgs a) {
  using A = dacc_t<R>;
  using BlockScan = cub::BlockScan<A, kBlock>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ A carry_s;
  const int64_t row = blockIdx.x;
  const T* x = reinterpret_cast<const T*>(a.in) + row * a.n;
  const int64_t nout = a.n + (a.include_initial ? 1 : 0);
  R* y = reinterpret_cast<R*>(a.out) + row * nout;
  const A identity = kProd ? A(1) : A(0);
  if (a.include_initial) {
    if (threadIdx.x == 0) y[0] = dconvert<R>(identity);
    ++y;
  }
  A carry = identity;
  for (int64_t base = 0; base < a.n; base += kBlock * kItems) {
    A v[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + threadIdx.x * kItems + j;
      v[j] = i < a.n ? dconvert<A>(x[i]) : identity;
    }
    A tile_total;
    BlockScan(temp).InclusiveScan(v, v, ScanOp<A, kProd>{}, tile_total);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int64_t i = base + threadIdx.x * kItems + j;
      if (i < a.n) y[i] = dconvert<R>(ScanOp<A, kProd>{}(carry, v[j]));
    }
    if (threadIdx.x == 0) carry_s = ScanOp<A, kProd>{}(carry, tile_total);
    __syncthreads();
    carry = carry_s;
    __syncthreads();  // temp and carry_s are reused by the next tile
  }
}

template <class T, class R, bool kProd>
__global__ void __launch_bounds__(kBlock) scan_columns_kernel(ScanArgs a) {
  using A = dacc_t<R>;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (col >= a.outer * a.inner) return;
  const int64_t p = col / a.inner, c = col % a.inner;
  const int64_t nout = a.n + (a.include_initial ? 1 : 0);
  const T* x = reinterpret_cast<const T*>(a.in) + p * a.n * a.inner + c;
  R* y = reinterpret_cast<R*>(a.out) + p * nout * a.inner + c;
  A acc = kProd ? A(1) : A(0);
  if (a.include_initial) {
    *y = dconvert<R>(acc);
    y += a.inner;
  }
  for (int64_t i = 0; i < a.n; ++i, x += a.inner, y += a.inner) {
    acc = ScanOp<A, kProd>{}(acc, dconvert<A>(*x));
    *y = dconvert<R>(acc);
  }
}

template <bool kProd>
void scan_cuda(const ScanArgs& a, DType in) {
  cuda_visit<kAllSet>(in, kProd ? "cumulative_prod" : "cumulative_sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = dsum_t<T>;
    cudaStream_t s = current_stream(current_device());
    if (a.outer == 0) return;
    if (a.inner == 1) {
      scan_rows_kernel<T, R, kProd><<<static_cast<unsigned>(a.outer), kBlock, 0, s>>>(a);
    } else {
      const int64_t cols = a.outer * a.inner;
      scan_columns_kernel<T, R, kProd>
          <<<static_cast<unsigned>((cols + kBlock - 1) / kBlock), kBlock, 0, s>>>(a);
    }
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(cumsum_stub, CUDA, &scan_cuda<false>);
TS_REGISTER_KERNEL(cumprod_stub, CUDA, &scan_cuda<true>);

}  // namespace ts::cuda
