// Shared by the cuBLAS and cuBLASLt callers: status checks and the data/compute types per dtype.
#pragma once
#include <cublas_v2.h>

#include "core/dtype.h"

namespace ts::cuda {

// Binds handle h to stream s of device dev with a workspace from the caching allocator (one
// per (handle, stream), kept for the process): cuBLAS's own default workspace would otherwise
// be allocated on a stream's first use, which is illegal while that stream captures a CUDA
// graph (Note [CUDA graphs]); PyTorch does the same.
void bind_cublas(cublasHandle_t h, int dev, cudaStream_t s);

// Throws RuntimeError("<op>: cuBLAS failed in <what> with <status>") unless s is SUCCESS.
void check_cublas(cublasStatus_t s, const char* what, const char* op = "matmul");

// The calling thread's cuBLAS handle for device `dev` (created on first use, kept for the
// thread's life), bound to the device's current stream.
cublasHandle_t cublas_handle(int dev);

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

// float32 computes in TF32 when ts.backends.cuda.matmul.allow_tf32; half types accumulate in
// float32. Integer dtypes raise TypeError (cuBLAS has no integer GEMM).
GemmTypes gemm_types(DType d);

}  // namespace ts::cuda
