// The LU family and triangular solves of torch.linalg: lu_factor(_ex), lu, lu_unpack, lu_solve,
// solve_triangular, and cond (built on the factorizations of ops/linalg_ext.h). Kernels: LAPACK
// getrf / getrs and BLAS trsm on the CPU (cpu/lapack_kernels.cpp), cuSOLVER getrf / getrs and
// cuBLAS trsmBatched on CUDA (cuda/linalg_cusolver.cpp). Each op records one node with
// PyTorch's formula (csrc/autograd/formulas_linalg.cpp) or is a composition of recorded ops.
#pragma once
#include <string>
#include <tuple>

#include "ops/linalg_composite.h"
#include "ops/linalg_ext.h"

namespace ts {

// a (B, n, m) = m x n column-major matrices, factored in place by partial pivoting (L with a
// unit diagonal below, U on and above it); piv (B, min(m, n)) int32 1-based row swaps; info per
// matrix: getrf's (0, or the 1-based index of the first zero pivot).
using LuFactorKernel = void (*)(const Tensor& a, const Tensor& piv, Info& info);
// lu (B, n, n) and piv (B, n) from the factor kernel; b (B, k, n) (n x k right-hand sides)
// overwritten with op(A)^-1 b, op by `trans`: 'N' A, 'T' A^T, 'C' A^H (getrs).
using LuSolveKernel = void (*)(const Tensor& lu, const Tensor& piv, const Tensor& b, char trans);
// a (B, n, n), b (B, k, n): b <- T^-1 b with T the `upper` (else lower) triangle of a, its
// diagonal taken as ones when `unit`. No singularity check: a zero diagonal gives inf / nan, as
// BLAS trsm.
using TrsmKernel = void (*)(const Tensor& a, const Tensor& b, bool upper, bool unit);

TS_DECLARE_STUB(LuFactorKernel, lu_factor_stub);
TS_DECLARE_STUB(LuSolveKernel, lu_solve_stub);
TS_DECLARE_STUB(TrsmKernel, trsm_stub);

// torch.linalg.lu_factor_ex: (LU, pivots, info) of (..., m, n) matrices with partial pivoting,
// LAPACK's packed layout; pivots int32 (..., min(m, n)) 1-based, info int32 (...).
// check_errors raises LinAlgError naming `op` at a zero pivot. pivot=false raises (not
// implemented). Differentiable in LU (PyTorch's lu_factor_ex_backward).
std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot, bool check_errors,
                                                const char* op = "linalg.lu_factor_ex");
// (P, L, U) with a = P L U: P (..., m, m), L (..., m, k) unit lower, U (..., k, n); singular a
// included. Differentiable in L and U (PyTorch's linalg_lu_backward).
std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& a, bool pivot);
// (P, L, U) from lu_factor's output; L and U (P) are empty (0,) tensors unless unpack_data
// (unpack_pivots). Pivots of any integer dtype. Differentiable in LU_data through tril / triu.
std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots);
// X with A X = B (X A = B when not `left`; A^H in place of A when `adjoint`), A = P L U given by
// lu_factor's (LU, pivots); batch dims broadcast. Differentiable in LU and B.
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint);
// X with T X = B (X T = B when not `left`) for T the upper / lower triangle of A (unit diagonal
// when `unitriangular`); batch dims broadcast; a zero on the diagonal gives inf / nan.
// Differentiable (PyTorch's linalg_solve_triangular backward).
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular);
// torch.linalg.cond: sigma_max / sigma_min for `svd_ord` (p None or 2; -2 inverted), else
// matrix_norm(A, p) * matrix_norm(inv(A), p) (square A; inf for singular matrices, NaN for the
// nuclear norm of a zero matrix, as torch). `ord_text` names p in errors.
Tensor cond_svd(const Tensor& a, bool inverted);
Tensor cond_norm(const Tensor& a, const MatrixNormOrd& ord, const std::string& ord_text);

}  // namespace ts
