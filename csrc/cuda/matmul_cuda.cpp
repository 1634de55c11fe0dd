// CUDA matmul through cuBLAS: one strided-batched GEMM per call (broadcast batch dims stay
// stride-0, a transposed operand is read in place as op=T). Note [Row-major GEMM]: cuBLAS is
// column-major, and a row-major m x n matrix is the column-major n x m transpose, so
// C = A B is computed as C^T = B^T A^T with the operands swapped.
#include <cublas_v2.h>

#include "core/device_backend.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "ops/copy.h"
#include "ops/linalg.h"

namespace ts::cuda {
namespace {

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS error";
  }
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(str("matmul: cuBLAS failed in ", what, " with ", cublas_status_name(s)));
}

cublasHandle_t handle(int dev) {
  thread_local std::vector<cublasHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    check_cublas(cublasCreate(&handles[dev]), "cublasCreate");
  }
  return handles[dev];
}

// How cuBLAS can read the last two dims of t (row-major view): `trans` when t is stored
// column-major; ld is the leading dimension in elements.
struct Mat {
  bool ok = false, trans = false;
  int64_t ld = 0, batch_stride = 0;
};

Mat mat_of(const Tensor& t) {
  const int64_t nd = t.ndim(), rows = t.dim(nd - 2), cols = t.dim(nd - 1);
  const int64_t rs = t.strides()[nd - 2], cs = t.strides()[nd - 1];
  Mat m;
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1))
    m = {true, false, rs, 0};
  else if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1))
    m = {true, true, cs, 0};
  else
    return m;
  // The batch dims must walk with one stride (or be broadcast, stride 0).
  int64_t stride = -1, expect = 0;
  for (int64_t d = nd - 3; d >= 0; --d) {
    if (t.dim(d) == 1) continue;
    if (stride < 0) {
      stride = t.strides()[d];
      expect = stride * t.dim(d);
    } else {
      if (t.strides()[d] != expect) return Mat{};
      expect *= t.dim(d);
    }
  }
  m.batch_stride = stride < 0 ? 0 : stride;
  return m;
}

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(DType d) {
  switch (d) {
    case DType::Float32:
      return {CUDA_R_32F,
              cuda_matmul_allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case DType::Float64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::Float16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::BFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::Complex64:
      return {CUDA_C_32F, CUBLAS_COMPUTE_32F};
    case DType::Complex128:
      return {CUDA_C_64F, CUBLAS_COMPUTE_64F};
    default:
      throw TypeError(str("matmul: dtype ", dtype_name(d), " is not supported on CUDA ",
                          "(cuBLAS has no integer GEMM; PyTorch raises too); hint: cast to ",
                          "float32 or compute on the CPU"));
  }
}

void matmul_cuda(const Tensor& out, const Tensor& a0, const Tensor& b0) {
  const GemmTypes ty = gemm_types(out.dtype());
  const int64_t nd = out.ndim(), m = out.dim(nd - 2), n = out.dim(nd - 1), k = a0.dim(nd - 1);
  if (out.numel() == 0) return;  // cuBLAS rejects ldc = n = 0
  if (k == 0) return fill_(out, Scalar::from_int(0));
  Tensor a = a0, b = b0;
  Mat ma = mat_of(a), mb = mat_of(b);
  if (!ma.ok) ma = mat_of(a = contiguous(a));
  if (!mb.ok) mb = mat_of(b = contiguous(b));
  int64_t batch = 1;
  for (int64_t d = 0; d < nd - 2; ++d) batch *= out.dim(d);
  TS_CHECK(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && batch <= INT32_MAX, ValueError,
           "matmul: dims beyond 2^31 are not supported on CUDA");
  const int dev = out.device().index;
  DeviceGuard g(dev);
  cublasHandle_t h = handle(dev);
  check_cublas(cublasSetStream(h, current_stream(dev)), "cublasSetStream");
  // alpha/beta in the compute type: float for 32F compute (incl. half and complex64 as cuComplex).
  const double one_d[2] = {1.0, 0.0}, zero_d[2] = {0.0, 0.0};
  const float one_f[2] = {1.0f, 0.0f}, zero_f[2] = {0.0f, 0.0f};
  const bool wide = ty.compute == CUBLAS_COMPUTE_64F;
  const void* alpha = wide ? static_cast<const void*>(one_d) : one_f;
  const void* beta = wide ? static_cast<const void*>(zero_d) : zero_f;
  // C^T (n x m, col-major, ld n) = B^T (n x k) * A^T (k x m)  (Note [Row-major GEMM]).
  const cublasOperation_t opb = mb.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opa = ma.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  check_cublas(cublasGemmStridedBatchedEx(h, opb, opa, static_cast<int>(n), static_cast<int>(m),
                                          static_cast<int>(k), alpha, b.data_ptr(), ty.data,
                                          static_cast<int>(mb.ld), mb.batch_stride, a.data_ptr(),
                                          ty.data, static_cast<int>(ma.ld), ma.batch_stride, beta,
                                          out.data_ptr(), ty.data, static_cast<int>(n), m * n,
                                          static_cast<int>(batch), ty.compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

}  // namespace

TS_REGISTER_KERNEL(matmul_stub, CUDA, &matmul_cuda);

}  // namespace ts::cuda
