// The array API linalg extension's factorizations: cholesky, det/slogdet, eigh/eigvalsh, inv,
// solve, qr, svd/svdvals. CPU kernels call LAPACK (cpu/lapack_kernels.cpp). The functions
// built on them (pinv, matrix_rank, matrix_power, multi_dot, the infinity norms) are in
// ops/linalg_composite.h; the LU family and triangular solves in ops/linalg_lu.h.
#pragma once
#include <initializer_list>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/grad_mode.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// Singular / not positive-definite / no convergence: Python's tessera.linalg.LinAlgError (a
// ValueError subclass), raised where NumPy raises numpy.linalg.LinAlgError.
struct LinAlgError : ValueError {
  using ValueError::ValueError;
};

// Note [LAPACK layout]: kernels take batches flattened to one leading dim, each matrix stored
// column-major (the tensor (B, cols, rows) contiguous holds the transposes), so LAPACKE runs
// in its native layout without transposing copies. Kernels overwrite their inputs and report
// LAPACK's info per batch entry in `info` (sized B by the caller); ops turn info into errors.
using Info = std::vector<int>;
// dst (B, n, m) contiguous <- src (batch..., m, n) of the same dtype, any strides. Packing in
// the kernel (serially for large matrices) keeps OpenMP out of the way right before LAPACK:
// idle OpenMP workers spin for a while after a parallel region and starve OpenBLAS's own
// threads (a parallel copy there made a 512x512 solve 20x slower on 2 cores).
using PackKernel = void (*)(const Tensor& src, const Tensor& dst);
// a (B, n, n): overwritten with the factor in the `upper` (else lower) triangle.
using CholeskyKernel = void (*)(const Tensor& a, bool upper, Info& info);
// a (B, n, n) LU-factorized in place; b (B, k, n) (n x k right-hand sides) overwritten with x.
using SolveKernel = void (*)(const Tensor& a, const Tensor& b, Info& info);
// a (B, n, n) LU-factorized in place; sign (B) of a's dtype, logabs (B) real, det (B).
using DetKernel = void (*)(const Tensor& a, const Tensor& sign, const Tensor& logabs,
                           const Tensor& det, Info& info);
// a (B, n, n) Hermitian (lower triangle read); w (B, n) real eigenvalues ascending; a is
// overwritten with the eigenvectors when `vectors`.
using EighKernel = void (*)(const Tensor& a, const Tensor& w, bool vectors, Info& info);
// a (B, n, m) = m x n matrices; q (B, kq, m) and r (B, n, kq) (kq x n), kq = m or min(m, n).
using QrKernel = void (*)(const Tensor& a, const Tensor& q, const Tensor& r, Info& info);
// a (B, n, m) = m x n matrices; s (B, k) real; u (B, ucols, m) and vt (B, n, vtrows) when
// defined (both undefined: values only).
using SvdKernel = void (*)(const Tensor& a, const Tensor& s, const Tensor& u, const Tensor& vt,
                           Info& info);

TS_DECLARE_STUB(PackKernel, lapack_pack_stub);
TS_DECLARE_STUB(CholeskyKernel, cholesky_stub);
TS_DECLARE_STUB(SolveKernel, solve_stub);
TS_DECLARE_STUB(DetKernel, det_stub);
TS_DECLARE_STUB(EighKernel, eigh_stub);
TS_DECLARE_STUB(QrKernel, qr_stub);
TS_DECLARE_STUB(SvdKernel, svd_stub);

// All take (..., m, n) stacks of matrices of a floating or complex dtype (float16/bfloat16
// compute in float32 and return their own dtype); integer inputs raise TypeError.
Tensor cholesky(const Tensor& x, bool upper);
Tensor det(const Tensor& x);
std::pair<Tensor, Tensor> slogdet(const Tensor& x);  // (sign, logabsdet)
std::pair<Tensor, Tensor> eigh(const Tensor& x);     // (eigenvalues, eigenvectors)
Tensor eigvalsh(const Tensor& x);
Tensor inv(const Tensor& x);
// x2 is a stack of matrices, or a vector when it is 1-D (the 2024.12 standard's rule).
Tensor solve(const Tensor& x1, const Tensor& x2);
std::pair<Tensor, Tensor> qr(const Tensor& x, bool complete);        // (Q, R)
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full);  // (U, S, Vh)
Tensor svdvals(const Tensor& x);
// LAPACK's info per matrix of square x, int32 of x's batch shape on x's device: for
// `cholesky` potrf's (the order of the first leading minor that is not positive-definite, of the
// `upper` or lower triangle), else getrf's (the 1-based index of the first zero pivot); 0 where
// the factorization succeeds.
Tensor factorization_info(const Tensor& x, bool cholesky, bool upper = false);

// The op layer's helpers, shared with the LU family (ops/linalg_lu.cpp).
namespace linalg_detail {
// The dtype LAPACK computes in (TypeError naming `op` for non-inexact d).
DType compute_dtype(DType d, const char* op);
Shape batch_of(const Tensor& x);  // x.shape[:-2]
Shape concat_shape(Shape s, std::initializer_list<int64_t> tail);
// x (batch..., m, n) -> a fresh (B, n, m) contiguous buffer of column-major matrices.
Tensor to_lapack(const Tensor& x, DType dt);
// A (B, cols, rows) buffer of column-major matrices as (batch..., rows, cols).
Tensor from_lapack(const Tensor& buf, const Shape& batch, int64_t rows, int64_t cols);
// Casts results computed in float32 back to the float16/bfloat16 input dtype `in`.
Tensor out_as(const Tensor& t, DType in);
Tensor host(const Tensor& t);            // t on the CPU
Tensor back(const Tensor& t, Device d);  // t (when defined) on d
// f() with grad mode off: an op computes without recording its internals, then records one
// node for its results, which fresh() marks as results (not views of the inputs).
template <class F>
auto unrecorded(const F& f) {
  autograd::GradModeGuard no_grad(false);
  return f();
}
void fresh(std::initializer_list<const Tensor*> results);
}  // namespace linalg_detail

}  // namespace ts
