// Backward formulas of the composite linalg ops (csrc/ops/linalg_composite.cpp), written with
// differentiable ops so that create_graph records them and gradients of every order work.
#include <algorithm>

#include "autograd/function.h"
#include "autograd/record_linalg.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/linalg.h"
#include "ops/linalg_lu.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

Tensor mh(const Tensor& t) { return conj(matrix_transpose(t)); }
Tensor mm(const Tensor& a, const Tensor& b) { return matmul(a, b); }

// Note [pinv backward]: PyTorch's pinv_backward (Golub & Pereyra's derivative of the
// pseudo-inverse for constant rank), arranged so the largest intermediate is min(M, N) square.
// It holds where the rank is locally constant, so rank-deficient inputs are fine, unlike
// differentiating through svd. Saved a, p.
variable_list pinv_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor a = c.saved(0), p = c.saved(1);
  const Tensor ph = mh(p), gh = mh(g[0]);
  if (a.dim(a.ndim() - 2) <= a.dim(a.ndim() - 1)) {
    const Tensor k = mm(gh, p), kph = mm(k, ph);
    return {add(subtract(add(negative(mh(mm(p, k))), kph), mm(mm(a, p), kph)),
                mm(mm(ph, p), subtract(gh, mm(k, a))))};
  }
  const Tensor k = mm(p, gh), phk = mm(ph, k);
  return {subtract(add(add(negative(mh(mm(k, p))), mm(mm(subtract(gh, mm(a, k)), p), ph)), phk),
                   mm(mm(phk, p), a))};
}

// ---- max/min of |x| (vector norms of ord +-inf): torch's norm_backward. The gradient is
// shared evenly by the elements whose |x| equals the norm (or is NaN), times sgn(x) (0 at
// NaN). attrs (keepdims, all, axes...); saved x, out.
variable_list inf_norm_bw(const BackwardCtx& c, const variable_list& g) {
  const bool keepdims = c.attr(0) != 0, all_axes = c.attr(1) != 0;
  const Tensor x = c.saved(0);
  Tensor out = c.saved(1), gk = g[0];
  const Shape& at = c.attrs();
  Shape axes(at.begin() + 2, at.end());
  for (int64_t& ax : axes) ax = ax < 0 ? ax + x.ndim() : ax;
  if (!keepdims && !all_axes) {
    Shape sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t ax : sorted) {
      out = expand_dims(out, ax);
      gk = expand_dims(gk, ax);
    }
  }
  const Tensor a = unary_op(abs_def, x);
  const Tensor nan = unary_op(isnan_def, a);
  const Tensor mask =
      astype_op(binary_op(logical_or_def, binary_op(equal_def, a, out), nan), gk.dtype(), false);
  const Tensor count = sum(mask, all_axes ? Axes() : Axes(axes), true, std::nullopt);
  const Tensor sgn =
      where(unary_op(isnan_def, x), wrap_scalar(Scalar::from_double(0.0)), unary_op(sign_def, x));
  return {multiply(sgn, multiply(divide(gk, count), mask))};
}

// ---- the LU family: PyTorch's formulas (FunctionsManual.cpp), written with recorded ops.
int64_t last(const Tensor& t) { return t.ndim() - 1; }
// narrow along the last (`col`) or second-to-last dim
Tensor cols_of(const Tensor& t, int64_t start, int64_t stop) {
  return slice(t, last(t), start, stop, 1);
}
Tensor rows_of(const Tensor& t, int64_t start, int64_t stop) {
  return slice(t, t.ndim() - 2, start, stop, 1);
}
Tensor zeros_of(const Tensor& t) {
  Tensor z = Tensor::empty(t.shape(), t.dtype(), t.device());
  fill_(z, Scalar::from_int(0));
  return z;
}
Tensor plus(const Tensor& a, const Tensor& b) {
  return !a.defined() ? b : !b.defined() ? a : add(a, b);
}
// X with T^H X = B (or X T^H = B): solve_triangular of mh(t)
Tensor tri(const Tensor& t, const Tensor& b, bool upper, bool left, bool unit) {
  return solve_triangular(t, b, upper, left, unit);
}

// Note [LU backward]: PyTorch's linalg_lu_backward for A = P L U, L (m, k) and U (k, n):
// square: gA = P L^-H [tril(L^H gL, -1) + triu(gU U^H)] U^-H; wide (m < n, U = [U1 | U2]):
// gA1 = P L^-H [tril(L^H gL - triu(gU) U^H, -1) U1^-H + triu(gU1)], gA2 = P L^-H gU2; tall
// (m > n, L = [L1; L2]): gA1 = P [L1^-H triu(gU U^H - L^H tril(gL, -1)) + tril(gL1, -1)] U^-H,
// gA2 = P gL2 U^-H. gL / gU may be undefined (no gradient reached them).
Tensor lu_backward(const Tensor& gl, const Tensor& gu, const Tensor& p, const Tensor& l,
                   const Tensor& u) {
  const int64_t m = l.dim(l.ndim() - 2), n = u.dim(last(u)), k = std::min(m, n);
  Tensor ga;
  if (m == n) {
    if (gl.defined()) ga = tril(mm(mh(l), gl), -1);
    if (gu.defined()) ga = plus(ga, triu(mm(gu, mh(u)), 0));
    ga = tri(mh(u), ga, false, false, false);
    ga = tri(mh(l), ga, true, true, true);
  } else if (m < n) {
    const Tensor u1 = cols_of(u, 0, k);
    if (gl.defined()) ga = mm(mh(l), gl);
    if (gu.defined()) {
      const Tensor t = mm(triu(gu, 0), mh(u));
      ga = ga.defined() ? subtract(ga, t) : negative(t);
    }
    ga = tri(mh(u1), tril(ga, -1), false, false, false);
    if (gu.defined()) ga = concat({add(ga, triu(cols_of(gu, 0, k), 0)), cols_of(gu, k, n)}, -1);
    ga = tri(mh(l), ga, true, true, true);
    if (!gu.defined()) ga = concat({ga, zeros_of(cols_of(u, k, n))}, -1);
  } else {
    const Tensor l1 = rows_of(l, 0, k);
    if (gu.defined()) ga = mm(gu, mh(u));
    if (gl.defined()) {
      const Tensor t = mm(mh(l), tril(gl, -1));
      ga = ga.defined() ? subtract(ga, t) : negative(t);
    }
    ga = tri(mh(l1), triu(ga, 0), true, true, true);
    if (gl.defined()) ga = concat({add(ga, tril(rows_of(gl, 0, k), -1)), rows_of(gl, k, m)}, -2);
    ga = tri(mh(u), ga, false, false, false);
    if (!gl.defined()) ga = concat({ga, zeros_of(rows_of(l, k, m))}, -2);
  }
  return mm(p, ga);
}

// lu_factor_ex_backward: the packed gLU is gL (its first k columns) and gU (its first k rows).
// Saved lu, piv.
variable_list lu_factor_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor lu = c.saved(0), piv = c.saved(1);
  auto [p, l, u] = lu_unpack(lu, piv, true, true);
  const int64_t m = lu.dim(lu.ndim() - 2), n = lu.dim(last(lu)), k = std::min(m, n);
  return {lu_backward(cols_of(g[0], 0, k), rows_of(g[0], 0, k), p, l, u)};
}

// linalg_lu: (P, L, U); P gets no gradient. Saved p, l, u.
variable_list lu_bw(const BackwardCtx& c, const variable_list& g) {
  if (!g[1].defined() && !g[2].defined()) return {Tensor()};
  return {lu_backward(g[1], g[2], c.saved(0), c.saved(1), c.saved(2))};
}

// Note [lu_solve backward]: gB = lu_solve(LU, piv, gX, left, !adjoint) (PyTorch's); for LU the
// gradient gA of the matrix A = P L U the system uses (A X = B: -gB X^H; A^H X = B: -X gB^H;
// X A = B: -X^H gB; X A^H = B: -gB^H X) taken to the packed factors: dA = P (dL U + L dU), so
// gLU = tril(P^T gA U^H, -1) + triu(L^H P^T gA). attrs (left, adjoint); saved lu, piv, x.
variable_list lu_solve_bw(const BackwardCtx& c, const variable_list& g) {
  const bool left = c.attr(0) != 0, adjoint = c.attr(1) != 0;
  const Tensor lu = c.saved(0), piv = c.saved(1), x = c.saved(2);
  const Tensor gb = lu_solve(lu, piv, g[0], left, !adjoint);
  Tensor glu;
  if (c.needs(0)) {
    Tensor ga = left ? (adjoint ? mm(x, mh(gb)) : mm(gb, mh(x)))
                     : (adjoint ? mm(mh(gb), x) : mm(mh(x), gb));
    ga = negative(ga);
    auto [p, l, u] = lu_unpack(lu, piv, true, true);
    const Tensor ptga = mm(matrix_transpose(p), ga);
    glu = add(tril(mm(ptga, mh(u)), -1), triu(mm(mh(l), ptga), 0));
  }
  return {glu, c.needs(1) ? gb : Tensor()};
}

// linalg_solve_triangular_backward: gB = solve_triangular(A^H, gX, !upper, left, unit); gA =
// -gB X^H (left) or -X^H gB, in A's triangle (strictly, when unit). attrs (upper, left, unit);
// saved a, x.
variable_list solve_triangular_bw(const BackwardCtx& c, const variable_list& g) {
  const bool upper = c.attr(0) != 0, left = c.attr(1) != 0, unit = c.attr(2) != 0;
  const Tensor a = c.saved(0), x = c.saved(1);
  const Tensor gb = solve_triangular(mh(a), g[0], !upper, left, unit);
  Tensor ga;
  if (c.needs(0)) {
    const Tensor t = negative(left ? mm(gb, mh(x)) : mm(mh(x), gb));
    ga = upper ? triu(t, unit ? 1 : 0) : tril(t, unit ? -1 : 0);
  }
  return {ga, c.needs(1) ? gb : Tensor()};
}

}  // namespace

void record_lu_factor(const Tensor& a, const Tensor& lu, const Tensor& piv) {
  if (!needs_grad({&a})) return;
  static const Formula kLuFactor{"LinalgLuFactorExBackward", lu_factor_bw};
  auto node = record(kLuFactor, {a}, {lu});
  node->save(lu, /*is_output=*/true);
  node->save(piv);
}

void record_lu(const Tensor& a, const Tensor& p, const Tensor& l, const Tensor& u) {
  if (!needs_grad({&a})) return;
  static const Formula kLu{"LinalgLuBackward", lu_bw, /*pass_undefined=*/true};
  auto node = record(kLu, {a}, {p, l, u});
  node->save(p, /*is_output=*/true);
  node->save(l, /*is_output=*/true);
  node->save(u, /*is_output=*/true);
}

void record_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& b, const Tensor& x,
                     bool left, bool adjoint) {
  if (!needs_grad({&lu, &b})) return;
  static const Formula kLuSolve{"LinalgLuSolveBackward", lu_solve_bw};
  auto node = record(kLuSolve, {lu, b}, {x});
  node->attrs = Shape{left ? 1 : 0, adjoint ? 1 : 0};
  node->save(lu);
  node->save(piv);
  node->save(x, /*is_output=*/true);
}

void record_solve_triangular(const Tensor& a, const Tensor& b, const Tensor& x, bool upper,
                             bool left, bool unit) {
  if (!needs_grad({&a, &b})) return;
  static const Formula kSolveTriangular{"LinalgSolveTriangularBackward", solve_triangular_bw};
  auto node = record(kSolveTriangular, {a, b}, {x});
  node->attrs = Shape{upper ? 1 : 0, left ? 1 : 0, unit ? 1 : 0};
  node->save(a);
  node->save(x, /*is_output=*/true);
}

void record_pinv(const Tensor& x, const Tensor& p) {
  if (!needs_grad({&x})) return;
  static const Formula kPinv{"LinalgPinvBackward", pinv_bw};
  auto node = record(kPinv, {x}, {p});
  node->save(x);
  node->save(p, /*is_output=*/true);
}

void record_inf_norm(const Tensor& x, const Tensor& out, const Axes& axes, bool keepdims) {
  if (!needs_grad({&x})) return;
  static const Formula kNorm{"LinalgVectorNormBackward", inf_norm_bw};
  auto node = record(kNorm, {x}, {out});
  Shape attrs{keepdims ? 1 : 0, axes ? 0 : 1};
  if (axes)
    for (int64_t ax : *axes) attrs.push_back(ax);
  node->attrs = std::move(attrs);
  node->save(x);
  node->save(out, /*is_output=*/true);
}

}  // namespace ts::autograd
