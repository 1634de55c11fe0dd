#include "ops/nn/loss.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/nn/operand_dtype.h"
#include "ops/nn/softmax.h"
#include "ops/nn_fused.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor isc(int64_t v) { return wrap_scalar(Scalar::from_int(v)); }
Tensor total(const Tensor& x) { return sum(x, std::nullopt, false, std::nullopt); }

// (N, C, d1, ...) -> (N, d1, ..., C).
Tensor class_last(const Tensor& x) { return x.ndim() > 2 ? moveaxis(x, Shape{1}, Shape{-1}) : x; }

// The class-index target's expected shape: (N, d1, ...) for batched input, () otherwise.
Shape target_shape(const Tensor& x) {
  if (x.ndim() == 1) return Shape{};
  Shape s{x.dim(0)};
  for (int64_t d = 2; d < x.ndim(); ++d) s.push_back(x.dim(d));
  return s;
}

void check_index_target(const Tensor& x, const Tensor& t, const char* op) {
  TS_CHECK(is_integral(t.dtype()), TypeError, op,
           ": expected integer class indices as target, got ", dtype_name(t.dtype()));
  const Shape want = target_shape(x);
  TS_CHECK(t.shape() == want, ValueError, op, ": target shape ", shape_str(t.shape()),
           " does not match input shape ", shape_str(x.shape()), " (expected ", shape_str(want),
           ")");
  TS_CHECK(t.device() == x.device(), ValueError, op, ": input on ", x.device().str(),
           " and target on ", t.device().str());
}

void check_weight(const Tensor& w, const Tensor& x, int64_t classes, const char* op) {
  if (!w.defined()) return;
  TS_CHECK(w.ndim() == 1 && w.dim(0) == classes, ValueError, op, ": weight of shape ",
           shape_str(w.shape()), " does not match ", classes, " classes of input shape ",
           shape_str(x.shape()));
  TS_CHECK(w.device() == x.device(), ValueError, op, ": input on ", x.device().str(),
           " and weight on ", w.device().str());
}

// Host targets are checked here; on a device the gather kernels check them without a sync.
void check_target_values(const Tensor& t, int64_t classes, int64_t ignore_index, const char* op) {
  if (!t.device().is_cpu()) return;
  const Tensor tc = contiguous(astype(t, DType::Int64, false));
  const int64_t* p = tc.data<int64_t>();
  for (int64_t i = 0; i < tc.numel(); ++i)
    TS_CHECK(p[i] == ignore_index || (p[i] >= 0 && p[i] < classes), IndexError, op,
             ": target values must be in [0, ", classes, ") or ignore_index (", ignore_index,
             "), got ", p[i]);
}

Tensor reduce(const Tensor& loss, Reduction r) {
  if (r == Reduction::Sum) return total(loss);
  if (r == Reduction::Mean) return ts::mean(loss, std::nullopt, false);
  return loss;
}

// Class-index cross entropy through the fused kernel: classes moved last and rows flattened.
// No host synchronization: 'mean' divides by the summed target weights on the device.
Tensor cross_entropy_fused(const Tensor& x, const Tensor& target, const Tensor& w,
                           int64_t ignore_index, Reduction r, double eps, DType loss_dtype) {
  const int64_t classes = x.ndim() > 1 ? x.dim(1) : x.dim(0);
  const Shape tshape = target_shape(x);
  int64_t rows = 1;
  for (int64_t s : tshape) rows *= s;
  // (rows, C) views of x (recorded when x requires grad, so the node's gradient reaches x).
  const Tensor logits = x.ndim() == 2 ? x : reshape(class_last(x), Shape{rows, classes});
  const Tensor rows_t = reshape(astype(target, DType::Int64, false), Shape{rows});
  auto [loss, lse, row_weight] =
      cross_entropy_forward(logits, rows_t, w, ignore_index, eps, loss_dtype);
  autograd::record_cross_entropy(logits, rows_t, w, loss, lse, ignore_index, eps);
  if (r == Reduction::None) return loss.shape() == tshape ? loss : reshape(loss, tshape);
  if (r == Reduction::Sum) return total(loss);
  return divide(total(loss), total(row_weight));
}

}  // namespace

Reduction parse_reduction(const std::string& s, const char* op) {
  if (s == "mean") return Reduction::Mean;
  if (s == "sum") return Reduction::Sum;
  if (s == "none") return Reduction::None;
  throw ValueError(str(op, ": '", s, "' is not a valid value for reduction ('mean', 'sum' or 'none')"));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction r) {
  const char* op = "nll_loss";
  Tensor x = input, t = target, w = weight;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("nll_loss"), x, t, w);
  TS_CHECK(x.ndim() >= 1, ValueError, op, ": input must have at least one dimension");
  const bool batched = x.ndim() > 1;
  check_index_target(x, t, op);
  check_same_dtype(op, "input", x, {{"weight", &w}});
  if (!batched) {
    x = expand_dims(x, 0);
    t = expand_dims(t, 0);
  }
  const int64_t classes = x.dim(1);
  check_weight(w, x, classes, op);
  check_target_values(t, classes, ignore_index, op);
  Tensor keep, valid, kept;
  {
    autograd::GradModeGuard no_grad(false);
    keep = binary_op(not_equal_def, t, isc(ignore_index));
    valid = astype(where(keep, t, isc(0)), DType::Int64, false);
    kept = astype(keep, x.dtype(), false);
  }
  // Each target's log-probability and weight (0 where ignored), picked by index.
  const Tensor picked = squeeze(gather(x, 1, expand_dims(valid, 1)), Shape{1});
  const Tensor wt =
      w.defined() ? multiply(reshape(index_select(w, 0, reshape(valid, Shape{valid.numel()})),
                                     valid.shape()),
                             kept)
                  : kept;
  const Tensor loss = negative(multiply(picked, wt));
  if (r == Reduction::Mean) return divide(total(loss), total(wt));
  const Tensor out = reduce(loss, r);
  return batched || r != Reduction::None ? out : squeeze(out, Shape{0});
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction r, double eps) {
  const char* op = "cross_entropy";
  Tensor x = input, t = target, w = weight;
  // Note [Cross entropy on 16-bit logits]: CUDA autocast runs cross entropy in float32. For
  // bfloat16/float16 logits with class-index targets the fused kernels read the 16-bit logits
  // and compute in float32 instead of casting them first: the same values (the cast is exact,
  // and the gradient is rounded to the logits' dtype once, as the cast's backward would), but
  // no float32 copy of the (rows, C) logits in the forward nor of their gradient in the
  // backward -- for GPT-2's 50304-way head at 8192 rows, 1.6 GB of traffic each way.
  const bool low_logits = autocast::active() && x.device().type == DeviceType::CUDA &&
                          autocast::is_enabled(DeviceType::CUDA) &&
                          (x.dtype() == DType::BFloat16 || x.dtype() == DType::Float16) &&
                          !is_inexact(t.dtype());
  Tensor none;  // 16-bit CUDA logits stay as they are; the weight still goes to float32
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("cross_entropy"), low_logits ? none : x, t, w);
  TS_CHECK(eps >= 0 && eps <= 1, ValueError, op, ": label_smoothing must be in [0, 1], got ",
           eps);
  TS_CHECK(x.ndim() >= 1, ValueError, op,
           ": input must have at least one dimension (classes)");
  TS_CHECK(is_floating(x.dtype()), TypeError, op, ": expected floating-point logits, got ",
           dtype_name(x.dtype()));
  const int64_t cdim = x.ndim() > 1 ? 1 : 0;
  const int64_t classes = x.dim(cdim);
  check_weight(w, x, classes, op);
  if (!low_logits && !is_inexact(t.dtype()))  // probability targets promote (PyTorch)
    check_same_dtype(op, "input", x, {{"weight", &w}});
  if (!is_inexact(t.dtype())) {
    check_index_target(x, t, op);
    const DType loss_dtype = low_logits ? DType::Float32 : x.dtype();
    if (!w.defined() || (w.dtype() == loss_dtype && w.device() == x.device()))
      return cross_entropy_fused(x, t, w, ignore_index, r, eps, loss_dtype);
    if (low_logits) x = astype_op(x, DType::Float32, false);
    // Mixed dtypes: log_softmax + NLL, and the smoothing term -sum_c w_c log p_c per sample
    // (zero where ignored; 'mean' divides by the NLL's denominator).
    const Tensor logp = softmax(x, cdim, std::nullopt, true);
    const Tensor nll = nll_loss(logp, t, w, ignore_index, r);
    if (eps == 0) return nll;
    Tensor keep = binary_op(not_equal_def, t, isc(ignore_index));
    const Tensor lp = class_last(cdim ? logp : expand_dims(logp, 0));
    Tensor smooth = negative(sum(w.defined() ? multiply(lp, w) : lp, Shape{-1}, false, std::nullopt));
    smooth = where(cdim ? keep : expand_dims(keep, 0), smooth, sc(0.0));
    Tensor ret;
    if (r == Reduction::Mean) {
      const Tensor kept = reshape(astype(keep, x.dtype(), false), Shape{keep.numel()});
      const Tensor denom =
          w.defined()
              ? total(multiply(index_select(w, 0, reshape(astype(where(keep, t, isc(0)), DType::Int64, false),
                                                          Shape{keep.numel()})),
                               kept))
              : total(kept);
      ret = divide(total(smooth), denom);
    } else if (r == Reduction::Sum) {
      ret = total(smooth);
    } else {
      ret = cdim ? smooth : squeeze(smooth, Shape{0});
    }
    return add(multiply(sc(1 - eps), nll), multiply(ret, sc(eps / double(classes))));
  }
  // Class probabilities.
  TS_CHECK(t.shape() == x.shape(), ValueError, op, ": target size ", shape_str(t.shape()),
           " must be the same as input size ", shape_str(x.shape()));
  const Tensor logp = softmax(x, cdim, std::nullopt, true);
  if (eps > 0) t = add(multiply(t, sc(1 - eps)), sc(eps / double(classes)));
  Tensor prod = multiply(logp, t);
  if (w.defined()) {
    Shape ws{classes};
    for (int64_t d = cdim + 1; d < x.ndim(); ++d) ws.push_back(1);
    prod = multiply(prod, reshape(w, ws));
  }
  const Tensor loss = negative(sum(prod, Shape{cdim}, false, std::nullopt));
  if (r == Reduction::Mean)
    return divide(total(loss), sc(double(loss.ndim() ? loss.numel() : 1)));
  return reduce(loss, r);
}

}  // namespace ts::nn
