#include "ops/linalg_lu.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record_linalg.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(LuFactorKernel, lu_factor_stub, "lu_factor");
TS_DEFINE_STUB(LuSolveKernel, lu_solve_stub, "lu_solve");
TS_DEFINE_STUB(TrsmKernel, trsm_stub, "solve_triangular");

using namespace linalg_detail;

namespace {

// Note [Host linear algebra] for the LU family: a device without these kernels computes on
// the host and copies the results back (CUDA has them: cuda/linalg_cusolver.cpp).
template <class Stub>
bool on_host(const Stub& stub, const Tensor& x) {
  return !x.device().is_cpu() && !stub.table[static_cast<int>(x.device().type)];
}

int64_t rows(const Tensor& t) { return t.dim(t.ndim() - 2); }
int64_t cols(const Tensor& t) { return t.dim(t.ndim() - 1); }

void check_2d(const Tensor& t, const char* op, const char* name) {
  TS_CHECK(t.ndim() >= 2, RuntimeError, op, ": The input tensor ", name,
           " must have at least 2 dimensions, got shape ", shape_str(t.shape()),
           "; hint: a vector b is b[..., None]");
}

void check_square(const Tensor& t, const char* op, const char* name) {
  TS_CHECK(rows(t) == cols(t), RuntimeError, op, ": ", name,
           " must be batches of square matrices, but they are ", rows(t), " by ", cols(t),
           " matrices");
}

// A X = B (X A = B when not `left`) needs B's rows (columns) to match A's size.
void check_system(const Tensor& a, const Tensor& b, bool left, const char* op) {
  const int64_t n = cols(a);
  TS_CHECK(left ? rows(b) == n : cols(b) == n, RuntimeError, op,
           ": Incompatible shapes of A and B for the equation ", left ? "AX = B" : "XA = B", " (",
           rows(a), "x", cols(a), " and ", rows(b), "x", cols(b), ")");
}

// The broadcast batch shape of a and b's matrices.
Shape common_batch(const Tensor& a, const Tensor& b, const char* op) {
  return broadcast_shapes(batch_of(a), batch_of(b), op);
}

Tensor int32_of(const Info& info, const Shape& shape) {
  Tensor out = Tensor::empty(shape, DType::Int32, Device());
  int32_t* p = out.data<int32_t>();
  for (size_t b = 0; b < info.size(); ++b) p[b] = info[b];
  return out;
}

// torch's error of a factor with a zero pivot (the first failing matrix named in a batch).
void raise_zero_pivot(const Info& info, bool batched, const char* op) {
  for (size_t b = 0; b < info.size(); ++b) {
    TS_CHECK(info[b] >= 0, RuntimeError, op, ": LAPACK rejected argument ", -info[b],
             " (an internal error; please report it)");
    if (info[b] > 0)
      throw LinAlgError(str(op, ": ", batched ? str("(Batch element ", b, "): ") : "", "U[",
                            info[b], ",", info[b],
                            "] is zero and using it on lu_solve would result in a division by "
                            "zero. If you still want to perform the factorization, consider "
                            "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"));
  }
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_plain(const Tensor& x, bool pivot, bool check_errors,
                                                   const char* op) {
  check_2d(x, op, "A");
  TS_CHECK(pivot, RuntimeError, op,
           ": LU without pivoting is not implemented on the CPU; hint: use pivot=True");
  if (on_host(lu_factor_stub, x)) {
    auto [lu, piv, info] = lu_factor_plain(host(x), pivot, check_errors, op);
    return {back(lu, x.device()), back(piv, x.device()), back(info, x.device())};
  }
  // torch's class: LU of integer / bool matrices is not implemented
  TS_CHECK(is_inexact(x.dtype()), NotImplementedError, op, ": not implemented for ",
           dtype_name(x.dtype()), " input; hint: cast to a floating dtype first, e.g. A.double()");
  const DType dt = compute_dtype(x.dtype(), op);
  const int64_t m = rows(x), n = cols(x), k = std::min(m, n);
  const Shape batch = batch_of(x);
  Tensor a = to_lapack(x, dt);
  Tensor piv = Tensor::empty(Shape{a.dim(0), k}, DType::Int32, x.device());
  Info info(a.dim(0));
  if (a.numel() > 0) lu_factor_stub.get(x.device())(a, piv, info);
  if (check_errors) raise_zero_pivot(info, x.ndim() > 2, op);
  return {out_as(from_lapack(a, batch, m, n), x.dtype()), reshape(piv, concat_shape(batch, {k})),
          back(int32_of(info, batch), x.device())};
}

// LU's P (..., m, m) of LAPACK's row swaps `pivots` (..., k), built on the host.
Tensor permutation(const Tensor& pivots, int64_t m, DType dt, Device dev, const char* op) {
  const Tensor p = contiguous(astype(host(pivots), DType::Int64, false));
  const int64_t kp = pivots.dim(pivots.ndim() - 1);
  const Shape shape(pivots.shape().begin(), pivots.shape().end() - 1);
  const int64_t nb = numel_of(shape);
  Tensor out = Tensor::empty(concat_shape(shape, {m, m}), DType::Float64, Device());
  double* o = out.data<double>();
  std::fill(o, o + out.numel(), 0.0);
  const int64_t* pv = p.data<int64_t>();
  std::vector<int64_t> perm(m);
  for (int64_t b = 0; b < nb; ++b) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t j = 0; j < kp; ++j) {
      const int64_t t = pv[b * kp + j] - 1;
      TS_CHECK(t >= 0 && t < m, RuntimeError, op,
               ": pivots must be between 1 and LU.size(-2) = ", m, " inclusive, got ", t + 1,
               "; hint: pass the pivots of linalg.lu_factor");
      std::swap(perm[j], perm[t]);
    }
    for (int64_t i = 0; i < m; ++i) o[b * m * m + perm[i] * m + i] = 1.0;
  }
  return to_device(astype(out, dt, false), dev);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& lu, const Tensor& pivots,
                                             bool unpack_data, bool unpack_pivots) {
  constexpr const char* op = "lu_unpack";
  check_2d(lu, op, "LU_data");
  TS_CHECK(is_integral(pivots.dtype()), RuntimeError, op,
           ": LU_pivots must be an integer tensor (int32 from linalg.lu_factor), got ",
           dtype_name(pivots.dtype()));
  const int64_t m = rows(lu), n = cols(lu), k = std::min(m, n);
  TS_CHECK(pivots.ndim() == lu.ndim() - 1 && pivots.dim(pivots.ndim() - 1) == k, RuntimeError, op,
           ": LU_pivots of shape ", shape_str(pivots.shape()), " do not match LU_data of shape ",
           shape_str(lu.shape()), " (expected (..., ", k, "))");
  const Tensor empty = Tensor::empty(Shape{0}, lu.dtype(), lu.device());
  Tensor P = empty, L = empty, U = empty;
  if (unpack_data) {
    L = add(tril(slice(lu, lu.ndim() - 1, 0, k, 1), -1), eye(m, k, 0, lu.dtype(), lu.device()));
    U = triu(slice(lu, lu.ndim() - 2, 0, k, 1), 0);
  }
  if (unpack_pivots) P = permutation(pivots, m, lu.dtype(), lu.device(), op);
  return {P, L, U};
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex(const Tensor& a, bool pivot, bool check_errors,
                                                const char* op) {
  if (!autograd::needs_grad({&a})) return lu_factor_plain(a, pivot, check_errors, op);
  auto r = unrecorded([&] { return lu_factor_plain(a, pivot, check_errors, op); });
  fresh({&std::get<0>(r)});
  autograd::record_lu_factor(a, std::get<0>(r), std::get<1>(r));
  return r;
}

std::tuple<Tensor, Tensor, Tensor> linalg_lu(const Tensor& a, bool pivot) {
  const bool grad = autograd::needs_grad({&a});
  auto r = unrecorded([&] {
    auto [lu, piv, info] = lu_factor_plain(a, pivot, false, "linalg.lu");
    return lu_unpack(lu, piv, true, true);
  });
  if (grad) {
    fresh({&std::get<0>(r), &std::get<1>(r), &std::get<2>(r)});
    autograd::record_lu(a, std::get<0>(r), std::get<1>(r), std::get<2>(r));
  }
  return r;
}

namespace {

// Solves with the LAPACK buffers of A's factors: b (batch..., n, k) -> op(A)^-1 b.
Tensor lu_solve_left(const Tensor& lu, const Tensor& pivots, const Tensor& b, char trans,
                     DType dt) {
  const int64_t n = cols(lu), k = cols(b);
  const Shape batch = batch_of(b);
  Tensor la = to_lapack(broadcast_to(lu, concat_shape(batch, {n, n})), dt);
  Tensor piv = contiguous(astype(broadcast_to(pivots, concat_shape(batch, {n})), DType::Int32));
  Tensor lb = to_lapack(b, dt);
  if (la.numel() > 0 && lb.numel() > 0)
    lu_solve_stub.get(lu.device())(la, reshape(piv, Shape{la.dim(0), n}), lb, trans);
  return from_lapack(lb, batch, n, k);
}

Tensor lu_solve_plain(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left,
                      bool adjoint) {
  constexpr const char* op = "linalg.lu_solve";
  check_2d(lu, op, "LU");
  check_2d(b, op, "B");
  check_square(lu, op, "LU");
  check_same_device(op, lu, b);
  TS_CHECK(pivots.ndim() == lu.ndim() - 1 && pivots.dim(pivots.ndim() - 1) == cols(lu) &&
               is_integral(pivots.dtype()),
           RuntimeError, op, ": pivots of shape ", shape_str(pivots.shape()), " and dtype ",
           dtype_name(pivots.dtype()), " do not match LU of shape ", shape_str(lu.shape()),
           "; hint: pass the int32 pivots of linalg.lu_factor");
  check_system(lu, b, left, op);
  if (on_host(lu_solve_stub, lu))
    return back(lu_solve_plain(host(lu), host(pivots), host(b), left, adjoint), lu.device());
  const DType in = promote_types(lu.dtype(), b.dtype());
  const DType dt = compute_dtype(in, op);
  const Shape batch = common_batch(lu, b, op);
  const Shape pbatch =
      broadcast_shapes(batch, Shape(pivots.shape().begin(), pivots.shape().end() - 1), op);
  const int64_t n = cols(lu);
  const Tensor piv = broadcast_to(pivots, concat_shape(pbatch, {n}));
  Tensor rhs = broadcast_to(b, concat_shape(pbatch, {rows(b), cols(b)}));
  Tensor x;
  if (left) {
    x = lu_solve_left(lu, piv, rhs, adjoint ? 'C' : 'N', dt);
  } else if (!adjoint) {  // X A = B  <=>  A^T X^T = B^T
    x = matrix_transpose(lu_solve_left(lu, piv, matrix_transpose(rhs), 'T', dt));
  } else {  // X A^H = B  <=>  A conj(X)^T = conj(B)^T
    x = conj(matrix_transpose(lu_solve_left(lu, piv, conj(matrix_transpose(rhs)), 'N', dt)));
  }
  return out_as(x, in);
}

}  // namespace

Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left, bool adjoint) {
  if (!autograd::needs_grad({&lu, &b})) return lu_solve_plain(lu, pivots, b, left, adjoint);
  Tensor x = unrecorded([&] { return lu_solve_plain(lu, pivots, b, left, adjoint); });
  fresh({&x});
  autograd::record_lu_solve(lu, pivots, b, x, left, adjoint);
  return x;
}

namespace {

Tensor solve_triangular_plain(const Tensor& a, const Tensor& b, bool upper, bool left, bool unit) {
  constexpr const char* op = "linalg.solve_triangular";
  check_2d(a, op, "A");
  check_2d(b, op, "B");
  check_square(a, op, "A");
  check_same_device(op, a, b);
  check_system(a, b, left, op);
  if (on_host(trsm_stub, a))
    return back(solve_triangular_plain(host(a), host(b), upper, left, unit), a.device());
  const DType in = promote_types(a.dtype(), b.dtype());
  const DType dt = compute_dtype(in, op);
  const Shape batch = common_batch(a, b, op);
  const int64_t n = cols(a);
  // X A = B  <=>  A^T X^T = B^T, A^T's triangle the other one
  const Tensor t = left ? a : matrix_transpose(a);
  const Tensor rhs = left ? b : matrix_transpose(b);
  const int64_t k = cols(rhs);
  Tensor la = to_lapack(broadcast_to(t, concat_shape(batch, {n, n})), dt);
  Tensor lb = to_lapack(broadcast_to(rhs, concat_shape(batch, {n, k})), dt);
  if (la.numel() > 0 && lb.numel() > 0)
    trsm_stub.get(a.device())(la, lb, left ? upper : !upper, unit);
  const Tensor x = from_lapack(lb, batch, n, k);
  return out_as(left ? x : matrix_transpose(x), in);
}

}  // namespace

Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left,
                        bool unitriangular) {
  if (!autograd::needs_grad({&a, &b}))
    return solve_triangular_plain(a, b, upper, left, unitriangular);
  Tensor x = unrecorded([&] { return solve_triangular_plain(a, b, upper, left, unitriangular); });
  fresh({&x});
  autograd::record_solve_triangular(a, b, x, upper, left, unitriangular);
  return x;
}

namespace {
void check_cond_input(const Tensor& a) {
  TS_CHECK(a.ndim() >= 2, RuntimeError,
           "linalg.cond: The input tensor A must have at least 2 dimensions, got shape ",
           shape_str(a.shape()));
}
bool empty_matrices(const Tensor& a) { return rows(a) == 0 || cols(a) == 0; }
Tensor real_zeros(const Tensor& a) {
  const DType d = is_complex(a.dtype()) ? to_real(a.dtype()) : a.dtype();
  Tensor z = Tensor::empty(batch_of(a), d, a.device());
  fill_(z, Scalar::from_double(0.0));
  return z;
}
Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
}  // namespace

Tensor cond_svd(const Tensor& a, bool inverted) {
  check_cond_input(a);
  if (empty_matrices(a)) {
    compute_dtype(a.dtype(), "linalg.cond");
    return real_zeros(a);
  }
  const Tensor s = svdvals(a);
  const int64_t last = s.ndim() - 1;
  const Tensor hi = select(s, last, 0), lo = select(s, last, s.dim(last) - 1);
  return inverted ? divide(lo, hi) : divide(hi, lo);
}

Tensor cond_norm(const Tensor& a, const MatrixNormOrd& ord, const std::string& ord_text) {
  check_cond_input(a);
  TS_CHECK(rows(a) == cols(a), RuntimeError, "linalg.cond(ord=", ord_text,
           "): A must be batches of square matrices, but they are ", rows(a), " by ", cols(a),
           " matrices");
  if (empty_matrices(a)) {
    compute_dtype(a.dtype(), "linalg.cond");
    return real_zeros(a);
  }
  auto [inverse, info] = inv_ex(a, false);
  const Tensor bad = binary_op(not_equal_def, info, wrap_scalar(Scalar::from_int(0)));
  const Tensor na = matrix_norm(a, ord, -2, -1, false);
  if (!item(any(bad, std::nullopt, false)).to<bool>())
    return multiply(na, matrix_norm(inverse, ord, -2, -1, false));
  // singular matrices have an infinite condition number (their inverse taken as identities)
  const int64_t n = cols(a);
  inverse =
      where(expand_dims(expand_dims(bad, -1), -1), eye(n, n, 0, a.dtype(), a.device()), inverse);
  const Tensor r = multiply(na, matrix_norm(inverse, ord, -2, -1, false));
  // torch fills the failed inverses with inf: its nuclear norm of 0 * that is NaN
  const Tensor worst = ord.name == "nuc"
                           ? where(binary_op(equal_def, na, sc(0.0)), sc(NAN), sc(INFINITY))
                           : sc(INFINITY);
  return where(bad, worst, r);
}

}  // namespace ts
