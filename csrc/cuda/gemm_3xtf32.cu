// The 3xTF32 GEMM kernels of Note [3xTF32 GEMMs] (cuda/gemm_3xtf32.h): CUTLASS's device-wide
// GEMM for sm_80+ (mma.sync m16n8k8 TF32) with the fast-float32 operator, one instantiation per
// operand layout.
#include <climits>

#include "cuda/gemm_3xtf32.h"

#ifdef TESSERA_HAVE_CUTLASS
#include <cutlass/gemm/device/gemm.h>
#endif

namespace ts::cuda {

#ifdef TESSERA_HAVE_CUTLASS
namespace {

using cutlass::layout::ColumnMajor;
using cutlass::layout::RowMajor;

// 128 x 128 blocks of C per CTA, 64 x 64 per warp (4 warps), k steps of 16, 3 pipeline stages,
// operands read in 16-byte vectors (4 floats).
template <class LayoutA, class LayoutB>
using Fast3xTF32 = cutlass::gemm::device::Gemm<
    float, LayoutA, float, LayoutB, float, ColumnMajor, float, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm80, cutlass::gemm::GemmShape<128, 128, 16>,
    cutlass::gemm::GemmShape<64, 64, 16>, cutlass::gemm::GemmShape<16, 8, 8>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, 3, 4, 4, false,
    cutlass::arch::OpMultiplyAddFastF32>;

template <class LayoutA, class LayoutB>
bool run(int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
         cudaStream_t s) {
  using Gemm = Fast3xTF32<LayoutA, LayoutB>;
  typename Gemm::Arguments args({m, n, k}, {a, lda}, {b, ldb}, {c, ldc}, {c, ldc}, {1.0f, 0.0f});
  Gemm op;
  if (op.can_implement(args) != cutlass::Status::kSuccess) return false;
  if (op.initialize(args, nullptr, s) != cutlass::Status::kSuccess) return false;
  return op(s) == cutlass::Status::kSuccess && cudaPeekAtLastError() == cudaSuccess;
}

}  // namespace

bool have_gemm_3xtf32() { return true; }

bool gemm_3xtf32(cublasOperation_t opa, cublasOperation_t opb, int64_t m, int64_t n, int64_t k,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 cudaStream_t s) {
  for (int64_t v : {m, n, k, lda, ldb, ldc})
    if (v <= 0 || v > INT_MAX) return false;
  const bool ta = opa != CUBLAS_OP_N, tb = opb != CUBLAS_OP_N;
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int la = static_cast<int>(lda), lb = static_cast<int>(ldb), lc = static_cast<int>(ldc);
  // op(A) = A^T of a column-major A is row-major, and likewise for B.
  if (!ta && !tb) return run<ColumnMajor, ColumnMajor>(M, N, K, a, la, b, lb, c, lc, s);
  if (!ta && tb) return run<ColumnMajor, RowMajor>(M, N, K, a, la, b, lb, c, lc, s);
  if (ta && !tb) return run<RowMajor, ColumnMajor>(M, N, K, a, la, b, lb, c, lc, s);
  return run<RowMajor, RowMajor>(M, N, K, a, la, b, lb, c, lc, s);
}

#else

bool have_gemm_3xtf32() { return false; }

bool gemm_3xtf32(cublasOperation_t, cublasOperation_t, int64_t, int64_t, int64_t, const float*,
                 int64_t, const float*, int64_t, float*, int64_t, cudaStream_t) {
  return false;
}

#endif

}  // namespace ts::cuda
