// The linalg extension's functions built on the factorizations (ops/linalg_ext.h) that carry
// their own gradient formula (csrc/autograd/formulas_linalg.cpp): pinv, matrix_rank and the
// infinity vector norms.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts {

// Moore-Penrose pseudo-inverse of (..., M, N) -> (..., N, M) via the SVD (via eigh when
// `hermitian`), dropping singular values (|eigenvalues|) at or below torch's tolerance
// max(atol, rtol * the largest); atol / rtol: scalars or tensors broadcasting against the batch;
// rtol defaults to max(M, N) * eps, or 0 where atol > 0 is given. Differentiable with PyTorch's
// formula (Note [pinv backward]).
Tensor pinv(const Tensor& x, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
            bool hermitian);
// The number of singular values (|eigenvalues| when `hermitian`) above the same tolerance,
// int64 (...).
Tensor matrix_rank(const Tensor& x, const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol, bool hermitian);
// torch.linalg.solve: the standard's solve(a, b) (ops/linalg_ext.h), plus torch's batch of
// vectors (b of shape a.shape[:-1], taken where the standard's reading of b as (..., M, K)
// matrices cannot hold: b.shape[-2] != M) and left=false (solves X a = b).
Tensor linalg_solve(const Tensor& a, const Tensor& b, bool left);
// torch's *_ex: (result, info) where info (int32, per matrix of x / a) is LAPACK's
// (factorization_info) and the result of a failing matrix is NaN, the others as inv / cholesky
// / linalg_solve give them (and differentiable as those); check_errors raises LinAlgError
// instead.
std::pair<Tensor, Tensor> inv_ex(const Tensor& x, bool check_errors);
std::pair<Tensor, Tensor> cholesky_ex(const Tensor& x, bool upper, bool check_errors);
std::pair<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left, bool check_errors);
// torch.linalg.lstsq: min ||a x - b|| through the pseudo-inverse, singular values at or below
// rcond * the largest dropped (default max(M, N) * eps); b (..., M, K) or a batch of vectors
// (b.ndim == a.ndim - 1). As torch's drivers (default gelsy on the CPU, gels elsewhere): rank
// for all but gels, singular_values for gelsd / gelss, and the squared residuals (..., K) where
// M > N for gels, and for gelsd / gelss when every matrix has full rank; the others empty.
// Differentiable through pinv and matmul.
struct LstsqResult {
  Tensor solution, residuals, rank, singular_values;
};
LstsqResult lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond,
                  std::optional<std::string> driver);
// torch.linalg.tensorinv: the inverse of a seen as a matrix of its first `ind` dims by the rest,
// shaped a.shape[ind:] + a.shape[:ind]. torch.linalg.tensorsolve: x with tensordot(a, x,
// x.ndim) == b (a's `dims` moved to the end first). Differentiable through inv / solve.
Tensor tensorinv(const Tensor& a, int64_t ind);
Tensor tensorsolve(const Tensor& a, const Tensor& b, const std::optional<Shape>& dims);
// exp of square (..., M, M) floating / complex matrices by scaling and squaring with a degree-18
// Taylor polynomial (the scaling from the largest 1-norm of the batch); differentiable through
// its ops. torch.linalg.vander: the powers x^0 ... x^(n-1) of x (..., K) along a new last dim
// (n defaults to K; integer inputs in int64).
Tensor matrix_exp(const Tensor& x);
// torch.linalg.householder_product: the first n columns of H_1 ... H_k for A (..., m, n),
// m >= n, and tau (..., k), k <= n, where H_i = I - tau_i v_i v_i^H and v_i is A's column i
// below the diagonal with a unit diagonal entry (LAPACK's orgqr/ungqr); differentiable
// through its ops.
Tensor householder_product(const Tensor& a, const Tensor& tau);
Tensor vander(const Tensor& x, std::optional<int64_t> n);
// The cross product of 3-element vectors along `axis` of the broadcast shape (counted from the
// end); the outer product of 1-D x1 (M,) and x2 (N,) -> (M, N). Differentiable through their ops.
Tensor cross(const Tensor& x1, const Tensor& x2, int64_t axis);
Tensor outer(const Tensor& x1, const Tensor& x2);
// max (largest) or min of |x| over `axes` for real floating x (the vector norms of ord +-inf);
// the max over an empty reduction is 0. Gradient: PyTorch's norm_backward for p = +-inf.
Tensor vector_norm_inf(const Tensor& x, const Axes& axes, bool keepdims, bool largest);

// The p-norm of floating or complex x over `axes` (all when nullopt): ord 2, 1, +-inf (max / min
// |x|), 0 (count of nonzeros), or any p ((sum |x|^p)^(1/p)); a real result. Autocast: float32.
// Differentiable through its ops, with torch's zero gradient where the norm is 0 (Note [norm
// gradient at 0]).
Tensor vector_norm(const Tensor& x, const Axes& axes, bool keepdims, const Scalar& ord);

// A matrix norm's order: a number (1, -1, 2, -2, inf, -inf) or "fro" / "nuc" (name non-empty).
struct MatrixNormOrd {
  double p = 0;
  std::string name;
};
// The norms of the matrices of x over its dims (d0, d1) (the standard's: the last two):
// 'fro', 'nuc' (sum of singular values), 2 / -2 (largest / smallest singular value), 1 / -1
// (max / min column abs sum), inf / -inf (max / min row abs sum); keepdims keeps both dims as 1.
Tensor matrix_norm(const Tensor& x, const MatrixNormOrd& ord, int64_t d0, int64_t d1,
                   bool keepdims);

// x @ x @ ... (n times) for square (..., M, M) by binary exponentiation; n = 0 gives identities
// (a copy in x's dtype), n < 0 powers of the inverse. Differentiable through matmul/inv.
Tensor matrix_power(const Tensor& x, int64_t n);
// A @ B @ ... (left to right) of 2-D tensors, the first may be 1-D (a row) and the last 1-D (a
// column), as torch.linalg.multi_dot; RuntimeError (as torch) for fewer than 2 or non-2-D.
Tensor multi_dot(const std::vector<Tensor>& xs);

}  // namespace ts
