#include "ops/nn/norm.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/nn_fused.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

// The trailing axes normalized_shape names; ValueError naming `op` when they differ.
Shape norm_axes(const Tensor& x, const Shape& ns, const char* op) {
  const int64_t k = static_cast<int64_t>(ns.size()), nd = x.ndim();
  bool ok = k <= nd;
  for (int64_t i = 0; ok && i < k; ++i) ok = x.dim(nd - k + i) == ns[i];
  TS_CHECK(ok, ValueError, op, ": normalized_shape ", shape_str(ns),
           " does not match the trailing dimensions of input shape ", shape_str(x.shape()));
  Shape axes;
  for (int64_t d = nd - k; d < nd; ++d) axes.push_back(d);
  return axes;
}

void check_param(const Tensor& p, const Tensor& x, const Shape& ns, const char* op,
                 const char* what) {
  if (!p.defined()) return;
  TS_CHECK(p.shape() == ns, ValueError, op, ": ", what, " of shape ", shape_str(p.shape()),
           " does not match normalized_shape ", shape_str(ns));
  TS_CHECK(p.device() == x.device(), ValueError, op, ": input on ", x.device().str(), " and ",
           what, " on ", p.device().str());
}

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }

double machine_eps(DType d) {
  switch (d) {
    case DType::Float16: return 0.0009765625;
    case DType::BFloat16: return 0.0078125;
    case DType::Float64: return 2.220446049250313e-16;
    default: return 1.1920928955078125e-07;
  }
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  Tensor x = input, w = weight, b = bias;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("layer_norm"), x, w, b);
  const Shape axes = norm_axes(x, normalized_shape, op);
  check_param(w, x, normalized_shape, op, "weight");
  check_param(b, x, normalized_shape, op, "bias");
  int64_t n = 1;
  for (int64_t s : normalized_shape) n *= s;
  const DType dt = x.dtype();
  const bool fused = is_floating(dt) && x.numel() > 0 && n > 0 &&
                     (!w.defined() || w.dtype() == dt) && (!b.defined() || b.dtype() == dt);
  if (fused) {
    Tensor y, mean, rstd;
    {
      autograd::GradModeGuard no_grad(false);
      std::tie(y, mean, rstd) = layer_norm_forward(x, n, w, b, eps);
    }
    autograd::record_layer_norm(x, w, b, y, mean, rstd, n, eps);
    return y;
  }
  TS_CHECK(is_inexact(dt), TypeError, op, ": expected a floating-point input, got ",
           dtype_name(dt));
  const Tensor m = ts::mean(x, axes, true);
  const Tensor v = var(x, axes, 0, true);
  Tensor y = divide(subtract(x, m), unary_op(sqrt_def, add(v, sc(eps))));
  if (w.defined()) y = multiply(y, w);
  if (b.defined()) y = add(y, b);
  return y;
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  const char* op = "rms_norm";
  const Shape axes = norm_axes(x, normalized_shape, op);
  check_param(weight, x, normalized_shape, op, "weight");
  TS_CHECK(is_floating(x.dtype()), TypeError, op, ": expected a floating-point input, got ",
           dtype_name(x.dtype()));
  const double e = eps ? *eps : machine_eps(x.dtype());
  Tensor y = divide(x, unary_op(sqrt_def, add(ts::mean(multiply(x, x), axes, true), sc(e))));
  return weight.defined() ? multiply(y, weight) : y;
}

}  // namespace ts::nn
