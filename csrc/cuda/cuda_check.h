// Error checking for CUDA runtime and cuBLAS calls: failures become ts::RuntimeError with the
// call, the error's name and text, instead of a crash or silent garbage.
#pragma once
#include <cuda_runtime.h>

#include "core/error.h"

namespace ts::cuda {
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line);
}  // namespace ts::cuda

#define TS_CUDA_CHECK(expr)                                                                       \
  do {                                                                                            \
    const cudaError_t ts_err_ = (expr);                                                           \
    if (ts_err_ != cudaSuccess) ::ts::cuda::throw_cuda_error(ts_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch-configuration errors surface here, not at the next sync.
#define TS_CUDA_CHECK_LAUNCH() TS_CUDA_CHECK(cudaGetLastError())
