#include <cuda/std/cmath>
#include <cuda/std/complex>
#include <cuda/std/limits>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "cuda/lu_det.h"

namespace ts::cuda {
namespace {

template <class T, class R>
__global__ void lu_det_kernel(const T* lu, const int* piv, int64_t batches, int64_t n, T* sign,
                              R* logabs, T* det) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b >= batches) return;
  const T* p = lu + b * n * n;
  T s(1), prod(1);
  R la(0);
  for (int64_t i = 0; i < n; ++i) {
    const T d = p[i + i * n];
    const R ad = ::cuda::std::abs(d);
    if (ad == R(0)) {
      // A zero pivot: the determinant is exactly zero, whatever the factors hold after it
      // (cuBLAS's batched LU may have divided by that zero further on; LAPACK does not).
      s = prod = T(0);
      break;
    }
    prod *= d;
    if (piv[b * n + i] != i + 1) {  // each row swap flips the determinant's sign
      s = -s;
      prod = -prod;
    }
    s = s * (d / ad);
    la += ::cuda::std::log(ad);
  }
  if (s == T(0)) la = -::cuda::std::numeric_limits<R>::infinity();
  sign[b] = s;
  logabs[b] = la;
  det[b] = prod;
}

template <class T, class R>
void launch_as(const Tensor& lu, const Tensor& piv, const Tensor& sign, const Tensor& logabs,
               const Tensor& det) {
  const int64_t batches = lu.dim(0);
  lu_det_kernel<T, R>
      <<<static_cast<unsigned>((batches + 127) / 128), 128, 0, current_stream(lu.device())>>>(
          reinterpret_cast<const T*>(lu.data_ptr()), reinterpret_cast<const int*>(piv.data_ptr()),
          batches, lu.dim(1), reinterpret_cast<T*>(sign.data_ptr()),
          reinterpret_cast<R*>(logabs.data_ptr()), reinterpret_cast<T*>(det.data_ptr()));
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_lu_det(const Tensor& lu, const Tensor& piv, const Tensor& sign, const Tensor& logabs,
                   const Tensor& det) {
  switch (lu.dtype()) {
    case DType::Float32:
      return launch_as<float, float>(lu, piv, sign, logabs, det);
    case DType::Float64:
      return launch_as<double, double>(lu, piv, sign, logabs, det);
    case DType::Complex64:
      return launch_as<cf32, float>(lu, piv, sign, logabs, det);
    case DType::Complex128:
      return launch_as<cf64, double>(lu, piv, sign, logabs, det);
    default:
      throw TypeError(str("det: CUDA kernels take float32/float64/complex64/complex128, got ",
                          dtype_name(lu.dtype())));
  }
}

}  // namespace ts::cuda
