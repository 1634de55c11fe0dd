// The embedding and margin losses of PyTorch's nn.functional (Poisson and Gaussian NLL, cosine
// embedding, multi-label soft margin, multi-class and multi-label margin, triplet margin):
// loss.h. Compositions of recorded ops, so gradients of every order come from their formulas.
#include <cmath>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg_composite.h"
#include "ops/math.h"
#include "ops/nn/loss.h"
#include "ops/nn/operand_dtype.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

constexpr double kPi = 3.14159265358979323846;

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
Tensor sum_axes(const Tensor& x, Shape axes) { return sum(x, axes, false, std::nullopt); }

// log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), the kinks at 0 written as wheres so the
// second derivative at 0 is PyTorch's -1/4.
Tensor log_sigmoid(const Tensor& x) {
  const Tensor pos = B(greater_equal_def, x, sc(0.0));
  return subtract(where(pos, sc(0.0), x), U(log1p_def, U(exp_def, where(pos, negative(x), x))));
}

// (C,) or (N, C) floating scores as (N, C), with PyTorch's message for anything else.
Tensor class_scores(const Tensor& x, const char* op) {
  TS_CHECK((x.ndim() == 1 || x.ndim() == 2) && x.dim(x.ndim() - 1) != 0, ValueError, op,
           ": expected non-empty vector or matrix with optional 0-dim batch size, but got input "
           "of shape ",
           shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()), TypeError, op, ": expected floating-point input, got ",
           dtype_name(x.dtype()));
  return x.ndim() == 2 ? x : expand_dims(x, 0);
}

// Integer class indices as int64, each in [lo, classes) (checked on the host; a device's
// gather checks its own indices).
Tensor class_indices(const Tensor& t, int64_t lo, int64_t classes, const char* op) {
  TS_CHECK(is_integral(t.dtype()), TypeError, op,
           ": expected integer class indices as target, got ", dtype_name(t.dtype()));
  const Tensor y = contiguous(astype(t, DType::Int64, false));
  if (y.device().is_cpu()) {
    const int64_t* p = y.data<int64_t>();
    for (int64_t i = 0; i < y.numel(); ++i)
      TS_CHECK(p[i] >= lo && p[i] < classes, IndexError, op, ": target values must be in [", lo,
               ", ", classes, "), got ", p[i]);
  }
  return y;
}

Tensor class_range(int64_t classes, const Tensor& like) {
  return arange(Scalar::from_int(0), Scalar::from_int(classes), Scalar::from_int(1), DType::Int64,
                like.device());
}

}  // namespace

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction r) {
  Tensor x = input, y = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("poisson_nll_loss"), x, y);
  Tensor loss = log_input ? subtract(U(exp_def, x), multiply(y, x))
                          : subtract(x, multiply(y, U(log_def, add(x, sc(eps)))));
  if (full) {
    // y log y - y + 0.5 log(2 pi y) where y > 1; the masked-out logs see 2 (finite gradients)
    const Tensor big = B(greater_def, y, sc(1.0));
    const Tensor yb = where(big, y, sc(2.0));
    const Tensor stirling = add(subtract(multiply(yb, U(log_def, yb)), yb),
                                multiply(sc(0.5), U(log_def, multiply(sc(2 * kPi), yb))));
    loss = add(loss, where(big, stirling, sc(0.0)));
  }
  return reduce_loss(loss, r);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var_, bool full,
                         double eps, Reduction r) {
  const char* op = "gaussian_nll_loss";
  Tensor var = var_;
  if (var.numel() > 0) {
    bool negative_entry;
    {
      autograd::GradModeGuard no_grad(false);
      negative_entry = item(any(B(less_def, var, sc(0.0)), std::nullopt, false)).to<bool>();
    }
    TS_CHECK(!negative_entry, ValueError, op, ": var has negative entry/entries");
  }
  if (var.shape() != input.shape()) {
    const Shape& is = input.shape();
    const Shape& vs = var.shape();
    bool last_dropped = vs.size() + 1 == is.size();
    for (int64_t i = 0; last_dropped && i < vs.size(); ++i) last_dropped = vs[i] == is[i];
    if (last_dropped) {
      var = expand_dims(var, -1);
    } else {
      int64_t mismatched = 0;
      const bool same_rank = vs.size() == is.size();
      for (int64_t i = 0; same_rank && i < vs.size(); ++i)
        if (vs[i] != is[i]) mismatched += vs[i];
      TS_CHECK(same_rank && mismatched == 1, ValueError, op, ": var is of incorrect size ",
               shape_str(vs), " for input ", shape_str(is),
               " (expected the input's shape, it without the last axis, or size 1 on one axis)");
    }
  }
  Tensor shift;  // max(var, eps) - var, a constant: the clamp's gradient is the identity
  {
    autograd::GradModeGuard no_grad(false);
    shift = subtract(B(maximum_def, var, sc(eps)), var);
  }
  var = add(var, shift);
  const Tensor d = subtract(input, target);
  Tensor loss = multiply(sc(0.5), add(U(log_def, var), divide(multiply(d, d), var)));
  if (full) loss = add(loss, sc(0.5 * std::log(2 * kPi)));
  return reduce_loss(loss, r);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction r) {
  const char* op = "cosine_embedding_loss";
  Tensor x1 = input1, x2 = input2, y = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("cosine_embedding_loss"), x1, x2, y);
  TS_CHECK(y.ndim() <= 1, ValueError, op, ": 0D or 1D target tensor expected, got ", y.ndim(),
           "D (target of shape ", shape_str(y.shape()), ")");
  const int64_t want = y.ndim() + 1;
  TS_CHECK(x1.ndim() == want && x2.ndim() == want, ValueError, op, ": ", y.ndim(),
           "D target tensor expects ", want, "D input tensors, but found inputs with sizes ",
           shape_str(x1.shape()), " and ", shape_str(x2.shape()));
  const Shape last{-1};
  const Tensor eps = sc(1e-12);
  const Tensor dot = sum_axes(multiply(x1, x2), last);
  const Tensor mag = multiply(add(sum_axes(multiply(x1, x1), last), eps),
                              add(sum_axes(multiply(x2, x2), last), eps));
  const Tensor cos = divide(dot, U(sqrt_def, mag));
  const Tensor zero = sc(0.0);
  const Tensor loss =
      add(where(B(equal_def, y, sc(1.0)), subtract(sc(1.0), cos), zero),
          where(B(equal_def, y, sc(-1.0)), clamp_min_zero(subtract(cos, sc(margin))), zero));
  return reduce_loss(loss, r);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction r) {
  TS_CHECK(input.ndim() >= 1, ValueError,
           "multilabel_soft_margin_loss: input must have a class axis, got shape ",
           shape_str(input.shape()));
  Tensor loss = negative(add(multiply(target, log_sigmoid(input)),
                             multiply(subtract(sc(1.0), target), log_sigmoid(negative(input)))));
  if (weight.defined()) loss = multiply(loss, weight);
  loss = divide(sum_axes(loss, Shape{-1}), sc(double(input.dim(input.ndim() - 1))));
  return reduce_loss(loss, r);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, double p, double margin,
                         const Tensor& weight, Reduction r) {
  const char* op = "multi_margin_loss";
  Tensor xin = input, w = weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("multi_margin_loss"), xin, w);
  TS_CHECK(p == 1 || p == 2, ValueError, op, ": only p == 1 and p == 2 supported, got ", p);
  const Tensor x = class_scores(xin, op);
  const int64_t n = x.dim(0), classes = x.dim(1);
  TS_CHECK(target.ndim() <= 1 && target.numel() == n, ValueError, op, ": inconsistent target size ",
           shape_str(target.shape()), " for input of size ", shape_str(xin.shape()));
  TS_CHECK(!w.defined() || (w.ndim() == 1 && w.dim(0) == classes), ValueError, op,
           ": weight must be a 1-D tensor of ", classes, " elements, got shape ",
           w.defined() ? shape_str(w.shape()) : std::string());
  check_same_dtype(op, "input", xin, {{"weight", &w}});
  const Tensor y = reshape(class_indices(target, 0, classes, op), Shape{n});
  const Tensor col = expand_dims(y, 1);
  // torch's kernel adds a term only where z > 0 (no gradient at the hinge's kink, NaN skipped)
  Tensor z = positive_part(add(subtract(sc(margin), take_along_axis(x, col, 1)), x));
  if (p == 2) z = multiply(z, z);
  if (w.defined()) z = multiply(z, expand_dims(index_select(w, 0, y), 1));
  z = where(B(not_equal_def, class_range(classes, x), col), z, sc(0.0));
  Tensor loss = divide(sum_axes(z, Shape{1}), sc(double(classes)));
  if (xin.ndim() == 1) loss = reshape(loss, target.shape());
  return reduce_loss(loss, r);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction r) {
  const char* op = "multilabel_margin_loss";
  Tensor xin = input;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("multilabel_margin_loss"), xin);
  const Tensor x = class_scores(xin, op);
  TS_CHECK(is_integral(target.dtype()), TypeError, op,
           ": expected integer class indices as target, got ", dtype_name(target.dtype()));
  TS_CHECK(target.shape() == xin.shape(), ValueError, op, ": inconsistent target size ",
           shape_str(target.shape()), " for input of size ", shape_str(xin.shape()));
  const int64_t classes = x.dim(1);
  const Tensor y = reshape(class_indices(target, -1, classes, op), x.shape());
  // valid[n, k]: target slot k comes before the sample's first -1
  const Tensor valid = B(greater_def,
                         cumulative_prod(astype(B(not_equal_def, y, sc(-1.0)), DType::Int64),
                                         int64_t{1}, std::nullopt, false),
                         sc(0.0));
  const Tensor idx = where(valid, y, wrap_scalar(Scalar::from_int(0)));
  const Tensor valid3 = expand_dims(valid, -1);
  const Tensor hit =
      B(logical_and_def, B(equal_def, expand_dims(idx, -1), class_range(classes, x)), valid3);
  const Tensor is_target = any(hit, Shape{1}, false);  // (N, C)
  const Tensor z =
      positive_part(add(subtract(sc(1.0), expand_dims(take_along_axis(x, idx, 1), -1)),
                        expand_dims(x, 1)));  // (N, K, C); as torch's kernel, only z > 0 counts
  const Tensor keep = B(logical_and_def, valid3, U(logical_not_def, expand_dims(is_target, 1)));
  Tensor loss = divide(sum_axes(where(keep, z, sc(0.0)), Shape{1, 2}), sc(double(classes)));
  if (xin.ndim() == 1) loss = reshape(loss, Shape{});
  return reduce_loss(loss, r);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  return vector_norm(add(subtract(x1, x2), sc(eps)), Shape{-1}, keepdim, Scalar::from_double(p));
}

void check_triplet_ranks(const Tensor& a, const Tensor& p, const Tensor& n, const char* op) {
  TS_CHECK(a.ndim() == p.ndim() && p.ndim() == n.ndim(), ValueError, op,
           ": the anchor, positive, and negative tensors are expected to have the same number "
           "of dimensions, but got: anchor ",
           a.ndim(), "D ", shape_str(a.shape()), ", positive ", p.ndim(), "D ",
           shape_str(p.shape()), ", and negative ", n.ndim(), "D ", shape_str(n.shape()),
           " inputs");
}

Tensor triplet_loss_from_distances(const Tensor& d_pos, const Tensor& d_neg, const Tensor& d_swap,
                                   double margin, Reduction r) {
  const Tensor neg = d_swap.defined() ? B(minimum_def, d_neg, d_swap) : d_neg;
  return reduce_loss(clamp_min_zero(subtract(add(sc(margin), d_pos), neg)), r);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction r) {
  const char* op = "triplet_margin_loss";
  Tensor a = anchor, pos = positive, neg = negative;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("triplet_margin_loss"), a, pos, neg);
  TS_CHECK(margin > 0, ValueError, op, ": margin must be greater than 0, got ", margin);
  check_triplet_ranks(a, pos, neg, op);
  return triplet_loss_from_distances(
      pairwise_distance(a, pos, p, eps, false), pairwise_distance(a, neg, p, eps, false),
      swap ? pairwise_distance(pos, neg, p, eps, false) : Tensor(), margin, r);
}

}  // namespace ts::nn
