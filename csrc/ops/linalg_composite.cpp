#include "ops/linalg_composite.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <tuple>

#include "autograd/grad_mode.h"
#include "autograd/record_linalg.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/linalg_ext.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }

void check_matrices(const Tensor& x, const char* op) {
  TS_CHECK(is_inexact(x.dtype()), TypeError, op, ": expected a floating-point or complex input, ",
           "got ", dtype_name(x.dtype()), "; hint: cast first, e.g. x.astype(ts.float64)");
  TS_CHECK(x.ndim() >= 2, ValueError, op, ": expected a (stack of) matrices with at least 2 ",
           "dims, got shape ", shape_str(x.shape()));
}

double eps_of(DType d) {
  switch (to_real(d)) {
    case DType::Float16:
      return 0.0009765625;  // 2^-10
    case DType::BFloat16:
      return 0.0078125;  // 2^-7
    case DType::Float64:
      return DBL_EPSILON;
    default:
      return FLT_EPSILON;
  }
}

// torch's tolerance max(atol, rtol * smax) per matrix, shaped (..., 1) to compare with the
// magnitudes s (..., K) (singular values, or |eigenvalues| when hermitian). atol and rtol are
// scalars or tensors broadcasting against the batch; rtol defaults to max(M, N) * eps, or to 0
// where atol > 0 is given (torch's get_atol_rtol). Computed in s's (real) dtype.
Tensor svals_tol(const Tensor& s, const Tensor& x, const std::optional<Tensor>& atol,
                 const std::optional<Tensor>& rtol) {
  const DType dt = s.dtype();
  const auto batched = [dt](const Tensor& t) {
    const Tensor c = astype(t, dt, false);
    return c.ndim() > 0 ? expand_dims(c, -1) : c;
  };
  const Tensor dflt = astype(
      sc(static_cast<double>(std::max(x.dim(x.ndim() - 2), x.dim(x.ndim() - 1))) * eps_of(dt)), dt,
      false);
  Tensor rt;
  if (rtol) {
    rt = batched(*rtol);
  } else if (atol) {
    rt = where(binary_op(greater_def, batched(*atol), sc(0.0)), sc(0.0), dflt);
  } else {
    rt = dflt;
  }
  // The largest of no magnitudes is 0 (a sum over the empty axis).
  const Tensor smax =
      s.dim(s.ndim() - 1) > 0 ? max(s, Shape{-1}, true) : sum(s, Shape{-1}, true, std::nullopt);
  const Tensor tol = multiply(smax, rt);
  return atol ? binary_op(maximum_def, batched(*atol), tol) : tol;
}

}  // namespace

Tensor pinv(const Tensor& x, const std::optional<Tensor>& atol, const std::optional<Tensor>& rtol,
            bool hermitian) {
  check_matrices(x, "pinv");
  Tensor p;
  {
    autograd::GradModeGuard no_grad(false);
    Tensor left, s, right;  // x = left diag(s) right^H
    if (hermitian) {
      std::tie(s, left) = eigh(x);
      right = left;
    } else {
      Tensor vh;
      std::tie(left, s, vh) = svd(x, false);
      right = conj(matrix_transpose(vh));
    }
    const Tensor mag = hermitian ? unary_op(abs_def, s) : s;
    const Tensor keep = binary_op(greater_def, mag, svals_tol(mag, x, atol, rtol));
    const Tensor s_inv = where(keep, unary_op(reciprocal_def, s), sc(0.0));
    p = matmul(multiply(right, expand_dims(astype(s_inv, x.dtype(), false), -2)),
               conj(matrix_transpose(left)));
  }
  autograd::record_pinv(x, p);  // torch's pinv_backward, hermitian or not
  return p;
}

Tensor matrix_rank(const Tensor& x, const std::optional<Tensor>& atol,
                   const std::optional<Tensor>& rtol, bool hermitian) {
  check_matrices(x, "matrix_rank");
  autograd::GradModeGuard no_grad(false);
  const Tensor s = hermitian ? unary_op(abs_def, eigvalsh(x)) : svdvals(x);
  return count_nonzero(binary_op(greater_def, s, svals_tol(s, x, atol, rtol)), Shape{-1}, false);
}

Tensor linalg_solve(const Tensor& a, const Tensor& b, bool left) {
  if (a.ndim() < 2) return solve(a, b);  // the op's own error
  if (!left) {                           // X A = B  <=>  A^T X^T = B^T
    if (b.ndim() == 1) return linalg_solve(matrix_transpose(a), b, true);
    if (b.ndim() < 2) return solve(a, b);
    return matrix_transpose(linalg_solve(matrix_transpose(a), matrix_transpose(b), true));
  }
  const int64_t n = a.ndim();
  if (b.ndim() >= 2 && n == b.ndim() + 1 && b.dim(b.ndim() - 1) == a.dim(n - 2) &&
      b.dim(b.ndim() - 2) != a.dim(n - 1)) {
    bool batch_of_vectors = true;  // b.shape == a.shape[:-1]
    for (int64_t d = 0; d < b.ndim(); ++d)
      batch_of_vectors = batch_of_vectors && b.dim(d) == a.dim(d);
    if (batch_of_vectors) return squeeze(solve(a, expand_dims(b, -1)), Shape{-1});
  }
  return solve(a, b);
}

namespace {

// int32 zeros of x's batch shape: the info of factorizations that all succeeded.
Tensor no_failures(const Tensor& x) {
  Tensor out =
      Tensor::empty(Shape(x.shape().begin(), x.shape().end() - 2), DType::Int32, x.device());
  fill_(out, Scalar::from_int(0));
  return out;
}

// (x with its failing matrices, info != 0, replaced by identities; the failure mask (batch...,
// 1, 1)): the factorization of the rest runs as usual and stays differentiable.
std::pair<Tensor, Tensor> failing_as_identity(const Tensor& x, const Tensor& info) {
  const Tensor bad = expand_dims(
      expand_dims(binary_op(not_equal_def, info, wrap_scalar(Scalar::from_int(0))), -1), -1);
  const int64_t n = x.dim(x.ndim() - 1);
  return {where(bad, eye(n, n, 0, x.dtype(), x.device()), x), bad};
}

}  // namespace

std::pair<Tensor, Tensor> inv_ex(const Tensor& x, bool check_errors) {
  check_matrices(x, "inv_ex");
  try {
    Tensor r = inv(x);
    return {r, no_failures(x)};
  } catch (const LinAlgError&) {
    if (check_errors) throw;
  }
  const Tensor info = factorization_info(x, false);
  auto [safe, bad] = failing_as_identity(x, info);
  return {where(bad, sc(NAN), inv(safe)), info};
}

std::pair<Tensor, Tensor> cholesky_ex(const Tensor& x, bool upper, bool check_errors) {
  check_matrices(x, "cholesky_ex");
  try {
    Tensor r = cholesky(x, upper);
    return {r, no_failures(x)};
  } catch (const LinAlgError&) {
    if (check_errors) throw;
  }
  const Tensor info = factorization_info(x, true, upper);
  auto [safe, bad] = failing_as_identity(x, info);
  return {where(bad, sc(NAN), cholesky(safe, upper)), info};
}

std::pair<Tensor, Tensor> solve_ex(const Tensor& a, const Tensor& b, bool left, bool check_errors) {
  check_matrices(a, "solve_ex");
  try {
    Tensor r = linalg_solve(a, b, left);
    return {r, no_failures(a)};
  } catch (const LinAlgError&) {
    if (check_errors) throw;
  }
  const Tensor info = factorization_info(a, false);
  auto [safe, bad] = failing_as_identity(a, info);
  const Tensor out = linalg_solve(safe, b, left);
  const int64_t n = a.ndim();
  bool vec = b.ndim() == 1;  // a vector result (torch's batch of vectors included)
  if (b.ndim() >= 2 && n == b.ndim() + 1 && b.dim(b.ndim() - 2) != a.dim(n - 1)) {
    vec = true;
    for (int64_t d = 0; d < b.ndim(); ++d) vec = vec && b.dim(d) == a.dim(d);
  }
  return {where(vec ? squeeze(bad, Shape{-1}) : bad, sc(NAN), out), info};
}

LstsqResult lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond,
                  std::optional<std::string> driver) {
  if (!driver) driver = a.device().is_cpu() ? "gelsy" : "gels";
  const std::string& d = *driver;
  TS_CHECK(d == "gels" || d == "gelsy" || d == "gelsd" || d == "gelss", RuntimeError,
           "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss), "
           "but got ",
           d);
  check_matrices(a, "lstsq");
  const bool vec = b.ndim() == a.ndim() - 1;
  const Tensor bm = vec ? expand_dims(b, -1) : b;
  const std::optional<Tensor> rt =
      rcond ? std::optional<Tensor>(sc(*rcond)) : std::optional<Tensor>();
  Tensor x = matmul(pinv(a, std::nullopt, rt, false), bm);
  const DType real = to_real(a.dtype());
  const Tensor empty = Tensor::empty(Shape{0}, real, a.device());
  LstsqResult r;
  r.rank = d != "gels" ? matrix_rank(a, std::nullopt, rt, false)
                       : Tensor::empty(Shape{0}, DType::Int64, a.device());
  r.singular_values = d == "gelsd" || d == "gelss" ? svdvals(a) : empty;
  r.residuals = empty;
  const int64_t m = a.dim(a.ndim() - 2), n = a.dim(a.ndim() - 1);
  // torch: the squared residuals where m > n, for gels always, for gelsd / gelss when every
  // matrix has full rank, never for gelsy.
  if (m > n && d != "gelsy" &&
      (d == "gels" ||
       item(all(binary_op(equal_def, r.rank, wrap_scalar(Scalar::from_int(n))), Axes(), false)).i !=
           0)) {
    const Tensor res = subtract(matmul(a, x), bm);
    r.residuals =
        astype(sum(unary_op(square_def, unary_op(abs_def, res)), Shape{-2}, false, std::nullopt),
               real, false);
  }
  r.solution = vec ? squeeze(x, Shape{-1}) : x;
  return r;
}

Tensor tensorinv(const Tensor& a, int64_t ind) {
  TS_CHECK(ind > 0, RuntimeError,
           "linalg.tensorinv: Expected a strictly positive integer for 'ind', but got ", ind);
  TS_CHECK(ind <= a.ndim(), RuntimeError, "linalg.tensorinv: ind ", ind,
           " is beyond the dims of A of shape ", shape_str(a.shape()));
  const Shape rows(a.shape().begin(), a.shape().begin() + ind);
  const Shape cols(a.shape().begin() + ind, a.shape().end());
  const int64_t m = numel_of(rows);
  TS_CHECK(m == numel_of(cols), RuntimeError,
           "linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
           "prod(self.shape[:ind]), got shape ",
           shape_str(a.shape()), " and ind ", ind);
  Shape out = cols;
  for (int64_t r : rows) out.push_back(r);
  return reshape(inv(reshape(a, Shape{m, m})), out);
}

Tensor tensorsolve(const Tensor& a, const Tensor& b, const std::optional<Shape>& dims) {
  Tensor x = a;
  if (dims) {
    Shape dest;
    const int64_t k = static_cast<int64_t>(dims->size());
    for (int64_t i = 0; i < k; ++i) dest.push_back(a.ndim() - k + i);
    x = moveaxis(a, *dims, dest);
  }
  TS_CHECK(b.ndim() <= x.ndim(), RuntimeError, "linalg.tensorsolve: B of shape ",
           shape_str(b.shape()), " has more dims than A of shape ", shape_str(x.shape()));
  const Shape rest(x.shape().begin() + b.ndim(), x.shape().end());
  const int64_t n = numel_of(rest);
  TS_CHECK(n == b.numel(), RuntimeError,
           "linalg.tensorsolve: Expected A to satisfy the requirement prod(A.shape[B.ndim:]) == "
           "prod(A.shape[:B.ndim]), got A of shape ",
           shape_str(x.shape()), " and B of shape ", shape_str(b.shape()));
  return reshape(solve(reshape(x, Shape{-1, n}), reshape(b, Shape{-1, 1})), rest);
}

Tensor matrix_exp(const Tensor& x) {
  TS_CHECK(x.ndim() >= 2 && x.dim(x.ndim() - 1) == x.dim(x.ndim() - 2), RuntimeError,
           "matrix_exp: expected a square matrix (or batch), got shape ", shape_str(x.shape()));
  TS_CHECK(is_inexact(x.dtype()), TypeError, "matrix_exp: expected a floating-point or complex ",
           "input, got ", dtype_name(x.dtype()), "; hint: cast first, e.g. x.astype(ts.float64)");
  if (x.numel() == 0) return astype(x, x.dtype(), true);
  double norm = 0;  // the largest 1-norm of the batch's matrices picks the scaling
  {
    autograd::GradModeGuard no_grad(false);
    norm = item(max(sum(unary_op(abs_def, x), Shape{-2}, false, std::nullopt), Axes(), false))
               .to<double>();
  }
  const int squarings =
      norm > 0.5 ? std::max(0, static_cast<int>(std::ceil(std::log2(norm))) + 1) : 0;
  const Tensor a = divide(x, sc(std::ldexp(1.0, squarings)));
  const int64_t n = x.dim(x.ndim() - 1);
  Tensor result = add(eye(n, n, 0, x.dtype(), x.device()), a);
  Tensor term = a;
  for (int k = 2; k <= 18; ++k) {  // degree-18 Taylor polynomial of the scaled matrix
    term = divide(matmul(term, a), sc(k));
    result = add(result, term);
  }
  for (int i = 0; i < squarings; ++i) result = matmul(result, result);
  return result;
}

Tensor householder_product(const Tensor& a, const Tensor& tau) {
  const char* op = "linalg.householder_product";
  TS_CHECK(a.ndim() >= 2, RuntimeError, op, ": input must have at least 2 dimensions, got shape ",
           shape_str(a.shape()));
  TS_CHECK(tau.ndim() == a.ndim() - 1, RuntimeError, op, ": tau must have ", a.ndim() - 1,
           " dimensions (input's batch dims and k), got input ", shape_str(a.shape()), " and tau ",
           shape_str(tau.shape()));
  const int64_t m = a.dim(a.ndim() - 2), n = a.dim(a.ndim() - 1), k = tau.dim(tau.ndim() - 1);
  TS_CHECK(m >= n, RuntimeError, op, ": input.shape[-2] must be greater than or equal to ",
           "input.shape[-1], got shape ", shape_str(a.shape()));
  TS_CHECK(k <= n, RuntimeError, op, ": input.shape[-1] must be greater than or equal to ",
           "tau.shape[-1], got input ", shape_str(a.shape()), " and tau ", shape_str(tau.shape()));
  for (int64_t d = 0; d + 2 < a.ndim(); ++d)
    TS_CHECK(a.dim(d) == tau.dim(d), RuntimeError, op, ": expected batch dimensions of tau to ",
             "equal input's, got input ", shape_str(a.shape()), " and tau ",
             shape_str(tau.shape()));
  TS_CHECK(is_inexact(a.dtype()), TypeError, op, ": expected a floating-point or complex input, ",
           "got ", dtype_name(a.dtype()));
  TS_CHECK(a.dtype() == tau.dtype(), TypeError, op, ": tau dtype ", dtype_name(tau.dtype()),
           " does not match input dtype ", dtype_name(a.dtype()));
  TS_CHECK(a.device() == tau.device(), RuntimeError, op, ": expected tau on input's device");
  // The reflectors: strictly-lower part of A with ones on the diagonal.
  const Tensor v = add(tril(a, -1, op), eye(m, n, 0, a.dtype(), a.device()));
  // I (m, n) over A's batch (k == 0 leaves it so); a copy, as the result owns its storage.
  Tensor q = astype(broadcast_to(eye(m, n, 0, a.dtype(), a.device()), a.shape()), a.dtype(), true);
  for (int64_t i = k - 1; i >= 0; --i) {  // Q = H_i Q, innermost reflector first
    const Tensor vi = expand_dims(select(v, v.ndim() - 1, i), -1);  // (..., m, 1)
    const Tensor ti = expand_dims(expand_dims(select(tau, tau.ndim() - 1, i), -1), -1);
    q = subtract(q, multiply(ti, matmul(vi, matmul(conj(matrix_transpose(vi)), q))));
  }
  return q;
}

Tensor vander(const Tensor& x, std::optional<int64_t> n) {
  TS_CHECK(x.ndim() >= 1, RuntimeError, "linalg.vander: x must have at least one dimension");
  TS_CHECK(!n || *n > 1, RuntimeError, "linalg.vander: N must be greater than 1, got ", n ? *n : 0);
  const int64_t cols = n ? *n : x.dim(x.ndim() - 1);
  TS_CHECK(x.dtype() != DType::Bool, TypeError,
           "linalg.vander supports floating point, complex, and integer tensors, but got bool");
  // torch: integer inputs take integer powers in int64
  const Tensor base = is_inexact(x.dtype()) ? x : astype(x, DType::Int64, false);
  Tensor one = Tensor::empty(base.shape(), base.dtype(), base.device());
  fill_(one, Scalar::from_int(1));
  std::vector<Tensor> powers{one};
  for (int64_t k = 1; k < cols; ++k) powers.push_back(multiply(powers.back(), base));
  return stack(powers, -1);
}

Tensor cross(const Tensor& x1, const Tensor& x2, int64_t axis) {
  const int64_t nd = std::max(x1.ndim(), x2.ndim());
  TS_CHECK(-nd <= axis && axis < nd, IndexError, "cross: axis ", axis,
           " is out of range for shapes ", shape_str(x1.shape()), " and ", shape_str(x2.shape()));
  const int64_t ax = axis < 0 ? axis : axis - nd;  // counted from the end, as broadcasting aligns
  for (const Tensor* x : {&x1, &x2})
    TS_CHECK(x->ndim() >= -ax && x->dim(x->ndim() + ax) == 3, ValueError,
             "cross: expected size 3 along axis ", axis, ", got shapes ", shape_str(x1.shape()),
             " and ", shape_str(x2.shape()));
  const Tensor a = moveaxis(x1, Shape{ax}, Shape{-1}), b = moveaxis(x2, Shape{ax}, Shape{-1});
  const auto at = [](const Tensor& t, int64_t i) { return select(t, t.ndim() - 1, i); };
  const auto term = [&](int64_t i, int64_t j) {
    return subtract(multiply(at(a, i), at(b, j)), multiply(at(a, j), at(b, i)));
  };
  return moveaxis(stack({term(1, 2), term(2, 0), term(0, 1)}, -1), Shape{-1}, Shape{ax});
}

Tensor outer(const Tensor& x1, const Tensor& x2) {
  TS_CHECK(x1.ndim() == 1 && x2.ndim() == 1, ValueError, "outer: expected 1-D inputs, got shapes ",
           shape_str(x1.shape()), " and ", shape_str(x2.shape()));
  return multiply(expand_dims(x1, 1), expand_dims(x2, 0));
}

// The minimum over `axes` of a norm: a reduced dim of size 0 has none, which NumPy reports as
// a ValueError and PyTorch as a RuntimeError (tessera's ValueError is both), not min's
// IndexError for an empty reduction.
static Tensor norm_min(const Tensor& a, const Axes& axes, bool keepdims, const char* op,
                       const char* ord) {
  const auto mask = axes_mask(axes, a.ndim(), op);
  for (int64_t d = 0; d < a.ndim(); ++d)
    TS_CHECK(!(mask[d] && a.dim(d) == 0), ValueError, "linalg.", op, " cannot compute the ", ord,
             " norm on the dimension ", d, " because this dimension is empty (shape ",
             shape_str(a.shape()), "); hint: use a positive order or reduce non-empty dims");
  return min(a, axes, keepdims);
}

Tensor vector_norm_inf(const Tensor& x, const Axes& axes, bool keepdims, bool largest) {
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor a = unary_op(abs_def, x);
    bool empty = false;
    const auto mask = axes_mask(axes, x.ndim(), "vector_norm");
    for (int64_t d = 0; d < x.ndim(); ++d) empty = empty || (mask[d] && x.dim(d) == 0);
    if (largest && empty) {
      out = sum(a, axes, keepdims, std::nullopt);  // all zeros: NumPy's norm of nothing
    } else {
      out = largest ? max(a, axes, keepdims) : norm_min(a, axes, keepdims, "vector_norm", "-inf");
    }
  }
  autograd::record_inf_norm(x, out, axes, keepdims);
  return out;
}

namespace {

Tensor weak(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor weak_int(int64_t v) { return wrap_scalar(Scalar::from_int(v)); }

// max of non-negative values that is 0 over an empty reduction (NumPy's norms: the largest of
// no magnitudes is 0), instead of max's error.
Tensor nonneg_max(const Tensor& a, const Axes& axes, bool keepdims, const char* op) {
  const auto mask = axes_mask(axes, a.ndim(), op);
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (mask[d] && a.dim(d) == 0) return sum(a, axes, keepdims, std::nullopt);  // empty: zeros
  return max(a, axes, keepdims);
}

void check_inexact(const Tensor& x, const char* op) {
  TS_CHECK(is_inexact(x.dtype()), TypeError, op,
           ": expected a floating-point or complex input, got ", dtype_name(x.dtype()),
           "; hint: cast first, e.g. x.astype(ts.float64)");
}

}  // namespace

Tensor vector_norm(const Tensor& x_, const Axes& axes, bool keepdims, const Scalar& ord) {
  Tensor x = x_;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("vector_norm"), x);
  check_inexact(x, "vector_norm");
  const double p = ord.to<double>();
  const Tensor a = unary_op(abs_def, x);
  if (std::isinf(p)) {
    if (is_floating(x.dtype())) return vector_norm_inf(x, axes, keepdims, p > 0);
    return p > 0 ? nonneg_max(a, axes, keepdims, "vector_norm")
                 : norm_min(a, axes, keepdims, "vector_norm", "-inf");
  }
  if (p == 0) {
    // torch's: the count of nonzero (NaN included) elements, differentiable with a zero
    // gradient: each counted 1 is sign(|x|) (derivative 0); NaNs are replaced by 1 first, by a
    // where, so no 0 * NaN reaches their gradient.
    const Tensor m = unary_op(abs_def, where(unary_op(isnan_def, x), weak_int(1), x));
    return sum(where(binary_op(not_equal_def, m, weak_int(0)), unary_op(sign_def, m), weak_int(0)),
               axes, keepdims, std::nullopt);
  }
  if (p == 1) return sum(a, axes, keepdims, std::nullopt);
  // Note [norm gradient at 0]: torch's norm_backward gives 0 (not 0 * inf = NaN) where the
  // norm is 0, and for p < 1 where an element is 0. The root (and for p < 1 the power) is
  // taken of a where-guarded argument and the exact result is selected by a where, so those
  // points get zero first and second derivatives while the values stay bit-identical.
  if (p == 2) {
    const Tensor s = sum(multiply(a, a), axes, keepdims, std::nullopt);
    const Tensor zero = binary_op(equal_def, s, weak_int(0));
    return where(zero, weak_int(0), unary_op(sqrt_def, where(zero, weak_int(1), s)));
  }
  Tensor ap;
  if (p < 1) {  // a ** p has an infinite slope (p > 0) or a pole (p < 0) at a == 0
    const Tensor nil = binary_op(equal_def, a, weak_int(0));
    ap = where(nil, p > 0 ? weak_int(0) : weak(INFINITY),
               pow(where(nil, weak_int(1), a), wrap_scalar(ord)));
  } else {
    ap = pow(a, wrap_scalar(ord));
  }
  const Tensor s = sum(ap, axes, keepdims, std::nullopt);
  if (p < 0) return pow(s, weak(1.0 / p));  // s is never 0 (bar empty reductions)
  const Tensor zero = binary_op(equal_def, s, weak_int(0));
  return where(zero, weak_int(0), pow(where(zero, weak_int(1), s), weak(1.0 / p)));
}

Tensor matrix_norm(const Tensor& x_, const MatrixNormOrd& ord, int64_t d0, int64_t d1,
                   bool keepdims) {
  Tensor x = x_;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("matrix_norm"), x);
  TS_CHECK(x.ndim() >= 2, ValueError,
           "matrix_norm: expected a (stack of) matrices with at least 2 dimensions, got shape ",
           shape_str(x.shape()));
  check_inexact(x, "matrix_norm");
  d0 = normalize_axis(d0, x.ndim(), "matrix_norm");
  d1 = normalize_axis(d1, x.ndim(), "matrix_norm");
  TS_CHECK(d0 != d1, RuntimeError, "linalg.matrix_norm: dims must be different. Got (", d0, ", ",
           d1, ")");
  const Tensor m = moveaxis(x, Shape{d0, d1}, Shape{-2, -1});
  const double p = ord.p;
  const bool named = !ord.name.empty();
  Tensor r;
  if (named && ord.name == "fro") {
    r = vector_norm(m, Shape{-2, -1}, false, Scalar::from_int(2));
  } else if (named && ord.name == "nuc") {
    r = sum(svdvals(m), Shape{-1}, false, std::nullopt);
  } else if (!named && (p == 2 || p == -2)) {
    const Tensor s = svdvals(m);
    r = p > 0 ? nonneg_max(s, Shape{-1}, false, "matrix_norm")
              : norm_min(s, Shape{-1}, false, "matrix_norm", "-2");
  } else if (!named && (p == 1 || p == -1 || std::isinf(p))) {
    const Tensor sums =
        sum(unary_op(abs_def, m), Shape{std::isinf(p) ? -1 : -2}, false, std::nullopt);
    r = p > 0 ? nonneg_max(sums, Shape{-1}, false, "matrix_norm")
              : norm_min(sums, Shape{-1}, false, "matrix_norm", std::isinf(p) ? "-inf" : "-1");
  } else {
    throw ValueError(str("matrix_norm: invalid ord ", named ? "'" + ord.name + "'" : str(p),
                         "; expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf"));
  }
  if (!keepdims) return r;
  return moveaxis(expand_dims(expand_dims(r, -1), -1), Shape{-2, -1}, Shape{d0, d1});
}

Tensor matrix_power(const Tensor& x, int64_t n) {
  TS_CHECK(x.ndim() >= 2, ValueError, "matrix_power: expected a (stack of) matrices with at least ",
           "2 dims, got shape ", shape_str(x.shape()));
  TS_CHECK(x.dim(x.ndim() - 1) == x.dim(x.ndim() - 2), ValueError,
           "matrix_power: expected square matrices, got shape ", shape_str(x.shape()));
  if (n == 0) {
    const Tensor eye_ = eye(x.dim(x.ndim() - 1), x.dim(x.ndim() - 1), 0, x.dtype(), x.device());
    return astype(broadcast_to(eye_, x.shape()), x.dtype(), true);
  }
  Tensor base = n < 0 ? inv(x) : x, result;
  // -n of INT64_MIN does not fit; its bits are those of 2^63, which the loop reads unsigned.
  uint64_t k = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  while (k) {  // binary exponentiation: O(log n) products
    if (k & 1) result = result.defined() ? matmul(result, base) : base;
    k >>= 1;
    if (k) base = matmul(base, base);
  }
  return result;
}

Tensor multi_dot(const std::vector<Tensor>& xs) {
  TS_CHECK(xs.size() >= 2, RuntimeError, "multi_dot(): expected at least 2 tensors but got ",
           xs.size());
  std::vector<Tensor> ms = xs;
  const bool first_1d = ms.front().ndim() == 1, last_1d = ms.back().ndim() == 1;
  if (first_1d) ms.front() = expand_dims(ms.front(), 0);
  if (last_1d) ms.back() = expand_dims(ms.back(), -1);
  for (size_t i = 0; i < ms.size(); ++i)
    TS_CHECK(ms[i].ndim() == 2, RuntimeError, "multi_dot(): tensor ", i, " must be 2D but got ",
             ms[i].ndim(), "D; hint: only the first and last may be 1-D");
  Tensor out = ms[0];
  for (size_t i = 1; i < ms.size(); ++i) out = matmul(out, ms[i]);
  if (first_1d) out = select(out, 0, 0);
  if (last_1d) out = select(out, out.ndim() - 1, 0);
  return out;
}

}  // namespace ts
