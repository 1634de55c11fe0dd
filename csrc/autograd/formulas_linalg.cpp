// Backward formulas of the composite linalg ops (csrc/ops/linalg_composite.cpp), written with
// differentiable ops so that create_graph records them and gradients of every order work.
#include <algorithm>

#include "autograd/function.h"
#include "autograd/record_linalg.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/linalg.h"
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

}  // namespace

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
