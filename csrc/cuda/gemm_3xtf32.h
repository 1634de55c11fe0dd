// Note [3xTF32 GEMMs]: float32 GEMMs on the tensor cores at float32 accuracy, through CUTLASS's
// fast-float32 operator (OpMultiplyAddFastF32), as flash attention's float32 kernels
// (cuda/attention_mma.cu) and PyTorch's memory-efficient attention already compute. Each
// operand x splits into big = tf32(x) and small = tf32(x - big); a_big b_big + a_big b_small +
// a_small b_big accumulate in float32 (the dropped a_small b_small and the rounding of small are
// about 2^-21 of a product, the order of float32's own accumulation error over K terms).
// H100/H200 run float32 FFMA at 67 TFLOP/s, TF32 tensor cores at 495: three TF32 products still
// beat one FFMA. It is one candidate of Note [Tuned GEMMs], used where it times fastest, and only
// while tuning is on (ts.cuda.tunable.enable(False) gives cuBLAS's FFMA kernels).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ts::cuda {

// Whether this build has the CUTLASS kernels (CUTLASS's headers at build time).
bool have_gemm_3xtf32();

// Column-major C (m x n, ld ldc) = op(A) (m x k) * op(B) (k x n), float32, alpha 1, beta 0, on
// stream s (cuBLAS's conventions). False when the kernels are not built or cannot run the
// problem (alignment: leading dimensions and pointers in whole 16-byte units).
bool gemm_3xtf32(cublasOperation_t opa, cublasOperation_t opb, int64_t m, int64_t n, int64_t k,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 cudaStream_t s);

}  // namespace ts::cuda
