#include "cuda/cusolver_util.h"

#include <climits>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "ops/copy.h"

namespace ts::cuda {
namespace {

const char* cusolver_status_name(cusolverStatus_t s) {
  switch (s) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default:
      return "cuSOLVER error";
  }
}

}  // namespace

cusolverDnHandle_t cusolver_handle(Device d) {
  const int dev = d.index;
  thread_local std::vector<cusolverDnHandle_t> handles;
  if (handles.size() <= static_cast<size_t>(dev)) handles.resize(dev + 1, nullptr);
  if (!handles[dev]) {
    DeviceGuard g(dev);
    check_cusolver(cusolverDnCreate(&handles[dev]), "cusolverDnCreate", "linalg");
  }
  check_cusolver(cusolverDnSetStream(handles[dev], current_stream(dev)), "cusolverDnSetStream",
                 "linalg");
  return handles[dev];
}

void check_cusolver(cusolverStatus_t s, const char* what, const char* op) {
  if (s != CUSOLVER_STATUS_SUCCESS)
    throw RuntimeError(str(op, ": cuSOLVER failed in ", what, " with ", cusolver_status_name(s)));
}

Tensor workspace(int64_t count, DType dtype, Device d) {
  return Tensor::empty(Shape{count < 1 ? 1 : count}, dtype, d);
}

void read_info(const Tensor& info, Info& out) {
  const Tensor h = to_device(info, Device());
  const int32_t* p = h.data<int32_t>();
  for (size_t b = 0; b < out.size(); ++b) out[b] = p[b];
}

int dim32(int64_t v, const char* op) {
  if (v > INT_MAX) throw ValueError(str(op, ": dimension ", v, " exceeds cuSOLVER's 32-bit limit"));
  return static_cast<int>(v);
}

}  // namespace ts::cuda
