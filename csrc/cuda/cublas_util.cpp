#include "cuda/cublas_util.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/device_backend.h"
#include "core/error.h"
#include "cuda/caching_allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"

namespace ts::cuda {
namespace {

int sm_major(int dev) {
  static std::mutex mu;
  static std::map<int, int> majors;
  std::lock_guard<std::mutex> lock(mu);
  auto it = majors.find(dev);
  if (it != majors.end()) return it->second;
  int major = 0;
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  return majors[dev] = major;
}

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

}  // namespace

void bind_cublas(cublasHandle_t h, int dev, cudaStream_t s) {
  check_cublas(cublasSetStream(h, s), "cublasSetStream");
  static std::mutex mu;
  static std::map<std::pair<cublasHandle_t, cudaStream_t>, void*> workspaces;
  std::lock_guard<std::mutex> lock(mu);
  void*& ws = workspaces[{h, s}];
  // 32 MiB on Hopper and later (split-K kernels use it), 4 MiB before: PyTorch's sizes.
  const int64_t bytes = (sm_major(dev) >= 9 ? 32 : 4) << 20;
  if (!ws) ws = cache_allocate(bytes, dev, s);
  // cublasSetStream resets the workspace to cuBLAS's default: set ours after it, every time.
  check_cublas(cublasSetWorkspace(h, ws, static_cast<size_t>(bytes)), "cublasSetWorkspace");
}

void check_cublas(cublasStatus_t s, const char* what, const char* op) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(str(op, ": cuBLAS failed in ", what, " with ", cublas_status_name(s)));
}

cublasHandle_t cublas_handle(int dev) {
  thread_local std::vector<cublasHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    check_cublas(cublasCreate(&handles[dev]), "cublasCreate");
  }
  bind_cublas(handles[dev], dev, current_stream(dev));  // stream + graph-safe workspace
  return handles[dev];
}

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

}  // namespace ts::cuda
