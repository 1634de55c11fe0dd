// Note [Tuned GEMMs]: for large float32 GEMMs, cuBLASLt's heuristic candidates are timed once
// per problem (shape, layouts, alignments) and the fastest is kept, as cudnn.benchmark does
// for convolutions (PyTorch's TunableOp, off by default there, does the same for GEMMs).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "cuda/cublas_util.h"

namespace ts::cuda {

// The calling thread's cuBLASLt handle for device dev (created on first use).
cublasLtHandle_t cublaslt_handle(int dev);

// The largest power of two (at most 256) dividing the address: cuBLASLt's heuristic must know
// how aligned the operands are, and picks vectorized kernels when they are.
uint32_t pointer_alignment(const void* p);

// Column-major D (n x m, ld ldc) = op(B) (n x k) * op(A) (k x m), alpha 1, beta 0: the operand
// order of Note [Row-major GEMM]. Returns false when the problem is not tuned (too small, not
// float32, inside a graph capture before the problem was tuned); `untuned` is the plain cuBLAS
// call, also timed as a candidate.
bool tuned_gemm(cublasOperation_t opb, cublasOperation_t opa, int64_t n, int64_t m, int64_t k,
                const void* b, int64_t ldb, const void* a, int64_t lda, void* d, int64_t ldc,
                const GemmTypes& ty, int dev, cudaStream_t s, const std::function<void()>& untuned);

}  // namespace ts::cuda
