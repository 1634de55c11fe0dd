// The pointwise losses of PyTorch's nn.functional (mse, l1, smooth L1, Huber, binary cross
// entropy with and without logits, KL divergence): loss.h.
#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/nn/loss.h"
#include "ops/nn/operand_dtype.h"
#include "ops/reduce.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor total(const Tensor& x) { return sum(x, std::nullopt, false, std::nullopt); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
Tensor reduce(const Tensor& loss, Reduction r) { return reduce_loss(loss, r); }

// PyTorch's optional per-element weight of mse/l1/huber: input's shape; 'mean' divides by the
// summed weights (by_weight) or the element count.
Tensor weighted_reduce(const Tensor& loss, const Tensor& input, const Tensor& w, Reduction r,
                       bool by_weight) {
  TS_CHECK(w.shape() == input.shape(), ValueError,
           "Weights and input must have the same size. (weight ", shape_str(w.shape()), ", input ",
           shape_str(input.shape()), ")");
  const Tensor l = multiply(loss, w);
  if (r == Reduction::Mean && by_weight) return divide(total(l), total(w));
  return reduce(l, r);
}

void check_same_shape(const Tensor& input, const Tensor& target, const char* op) {
  TS_CHECK(input.shape() == target.shape(), ValueError, op, ": target size ",
           shape_str(target.shape()), " must be the same as input size ", shape_str(input.shape()),
           " (broadcast the target explicitly if that is what you mean)");
}

}  // namespace

Tensor reduce_loss(const Tensor& loss, Reduction r) {
  if (r == Reduction::Sum) return total(loss);
  if (r == Reduction::Mean) return mean(loss, std::nullopt, false);
  return loss;
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r, const Tensor& weight) {
  Tensor x = input, t = target, w = weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("mse_loss"), x, t);
  const Tensor d = subtract(x, t);
  const Tensor loss = multiply(d, d);
  return w.defined() ? weighted_reduce(loss, x, w, r, true) : reduce(loss, r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r, const Tensor& weight) {
  Tensor x = input, t = target, w = weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("l1_loss"), x, t);
  const Tensor loss = U(abs_def, subtract(x, t));
  return w.defined() ? weighted_reduce(loss, x, w, r, true) : reduce(loss, r);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta) {
  Tensor x = input, t = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("smooth_l1_loss"), x, t);
  TS_CHECK(beta >= 0, ValueError, "smooth_l1_loss: beta must be non-negative, got ", beta);
  const Tensor d = U(abs_def, subtract(x, t));
  if (beta == 0) return reduce(d, r);
  const Tensor loss =
      where(B(less_def, d, sc(beta)), divide(multiply(multiply(sc(0.5), d), d), sc(beta)),
            subtract(d, sc(0.5 * beta)));
  return reduce(loss, r);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction r, double delta,
                  const Tensor& weight) {
  Tensor x = input, t = target, w = weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("huber_loss"), x, t);
  TS_CHECK(delta > 0, ValueError, "huber_loss: delta must be positive, got ", delta);
  const Tensor d = U(abs_def, subtract(x, t));
  const Tensor loss = where(B(less_def, d, sc(delta)), multiply(multiply(sc(0.5), d), d),
                            multiply(sc(delta), subtract(d, sc(0.5 * delta))));
  return w.defined() ? weighted_reduce(loss, x, w, r, false) : reduce(loss, r);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction r) {
  const char* op = "binary_cross_entropy";
  Tensor p = input, y = target, w = weight;
  TS_CHECK(!(autocast::active() && p.device().type == DeviceType::CUDA &&
             autocast::is_enabled(DeviceType::CUDA)),
           RuntimeError,
           "binary_cross_entropy: unsafe to autocast on CUDA (a sigmoid right before it loses "
           "too much in float16); use binary_cross_entropy_with_logits / BCEWithLogitsLoss, "
           "which is safe to autocast, or disable autocast around it.");
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("binary_cross_entropy"), p, y, w);
  check_same_shape(p, y, op);
  check_same_dtype(op, "input", p, {{"target", &y}});
  // Probabilities outside [0, 1] (or NaN) gave NaN or a finite wrong loss (PyTorch raises on
  // the CPU; device memory is not read back here).
  const auto check_unit = [op](const Tensor& t, const char* name) {
    if (!t.device().is_cpu() || t.numel() == 0) return;
    const double lo = item(amin(t, std::nullopt, false)).to<double>();
    const double hi = item(amax(t, std::nullopt, false)).to<double>();
    TS_CHECK(lo >= 0 && hi <= 1, RuntimeError, op, ": all elements of ", name,
             " should be between 0 and 1, got values in [", lo, ", ", hi, "] (shape ",
             shape_str(t.shape()),
             "); hint: apply sigmoid first, or use "
             "binary_cross_entropy_with_logits");
  };
  check_unit(p, "input");
  check_unit(y, "target");
  Tensor loss;
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor lo = sc(-100.0);
    loss = negative(
        add(multiply(y, B(maximum_def, U(log_def, p), lo)),
            multiply(subtract(sc(1.0), y), B(maximum_def, U(log1p_def, negative(p)), lo))));
  }
  autograd::record_binary_cross_entropy(p, y, loss);
  // The weight may have another dtype; the loss keeps the input's (PyTorch's).
  if (w.defined())
    loss = multiply(loss, w.dtype() == p.dtype() ? w : astype_op(w, p.dtype(), false));
  return reduce(loss, r);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction r,
                                        const Tensor& pos_weight) {
  Tensor x = input, y = target, w = weight, pw = pos_weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("binary_cross_entropy_with_logits"), x, y, w,
                                pw);
  check_same_shape(x, y, "binary_cross_entropy_with_logits");
  // log(1 + exp(-x)) = log1p(exp(-|x|)) + max(-x, 0)
  const Tensor softplus_neg =
      add(U(log1p_def, U(exp_def, negative(U(abs_def, x)))), B(maximum_def, negative(x), sc(0.0)));
  const Tensor one = sc(1.0);
  const Tensor scale = pw.defined() ? add(one, multiply(subtract(pw, one), y)) : Tensor();
  Tensor loss = add(multiply(subtract(one, y), x),
                    scale.defined() ? multiply(scale, softplus_neg) : softplus_neg);
  if (w.defined()) loss = multiply(loss, w);
  return reduce(loss, r);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction r, bool batchmean,
              bool log_target) {
  Tensor x = input, t = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("kl_div"), x, t);
  Tensor loss;
  if (log_target) {
    loss = multiply(U(exp_def, t), subtract(t, x));
  } else {
    // t log t (0 where t <= 0, with no NaN from the masked-out logs nor their gradients)
    const Tensor pos = B(greater_def, t, sc(0.0));
    const Tensor tlogt = where(pos, multiply(t, U(log_def, where(pos, t, sc(1.0)))), sc(0.0));
    loss = subtract(tlogt, multiply(t, x));
  }
  if (batchmean) return divide(total(loss), sc(double(x.ndim() ? x.dim(0) : 1)));
  return reduce(loss, r);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction r) {
  Tensor x = input, y = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("soft_margin_loss"), x, y);
  bool fits = y.ndim() <= x.ndim();
  for (int64_t i = 1; fits && i <= y.ndim(); ++i)
    fits = y.dim(y.ndim() - i) == 1 || y.dim(y.ndim() - i) == x.dim(x.ndim() - i);
  TS_CHECK(fits, ValueError, "soft_margin_loss: target of shape ", shape_str(y.shape()),
           " does not broadcast to the input's shape ", shape_str(x.shape()));
  return reduce(U(log1p_def, U(exp_def, multiply(negative(y), x))), r);
}

Tensor clamp_min_zero(const Tensor& v) { return where(B(less_def, v, sc(0.0)), sc(0.0), v); }

Tensor positive_part(const Tensor& v) { return where(B(greater_def, v, sc(0.0)), v, sc(0.0)); }

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction r) {
  Tensor x1 = input1, x2 = input2, y = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("margin_ranking_loss"), x1, x2, y);
  TS_CHECK(x1.ndim() == x2.ndim() && x2.ndim() == y.ndim(), ValueError,
           "margin_ranking_loss: all input tensors should have the same number of dimensions, "
           "but got sizes input1: ",
           shape_str(x1.shape()), ", input2: ", shape_str(x2.shape()),
           ", target: ", shape_str(y.shape()));
  const Tensor v = add(multiply(negative(y), subtract(x1, x2)), sc(margin));
  return reduce(clamp_min_zero(v), r);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction r) {
  Tensor x = input, y = target;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("hinge_embedding_loss"), x, y);
  const Tensor zero = sc(0.0);
  const Tensor loss =
      add(where(B(not_equal_def, y, sc(1.0)), clamp_min_zero(subtract(sc(margin), x)), zero),
          where(B(not_equal_def, y, sc(-1.0)), x, zero));
  return reduce(loss, r);
}

}  // namespace ts::nn
