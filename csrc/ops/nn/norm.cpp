#include "ops/nn/norm.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/batch_norm.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/linalg_composite.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/nn/operand_dtype.h"
#include "ops/nn_fused.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

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
  TS_CHECK(p.device() == x.device(), ValueError, op, ": input on ", x.device().str(), " and ", what,
           " on ", p.device().str());
}

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }

double machine_eps(DType d) {
  switch (d) {
    case DType::Float16:
      return 0.0009765625;
    case DType::BFloat16:
      return 0.0078125;
    case DType::Float64:
      return 2.220446049250313e-16;
    default:
      return 1.1920928955078125e-07;
  }
}

// (1, C, 1, ...): a per-channel (C,) parameter broadcast against (N, C, *) x.
Tensor per_channel(const Tensor& p, const Tensor& x, const char* op, const char* what) {
  TS_CHECK(p.ndim() == 1 && p.dim(0) == x.dim(1), ValueError, op, ": ", what, " of shape ",
           shape_str(p.shape()), " does not match the ", x.dim(1), " channels of input shape ",
           shape_str(x.shape()), "; hint: pass a 1-D ", what, " of one value per channel");
  Shape s(x.ndim(), 1);
  s[1] = x.dim(1);
  return reshape(p, s);
}

Tensor affine(Tensor y, const Tensor& x, const Tensor& w, const Tensor& b, const char* op) {
  if (w.defined()) y = multiply(y, per_channel(w, x, op, "weight"));
  if (b.defined()) y = add(y, per_channel(b, x, op, "bias"));
  return y;
}

int64_t prod_from(const Shape& s, size_t first) {
  int64_t n = 1;
  for (size_t i = first; i < static_cast<size_t>(s.size()); ++i) n *= s[i];
  return n;
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
  if (check_norm_param_dtypes(op, x, w, b))  // 16-bit input, float32 parameters: in float32
    return astype_op(layer_norm(astype_op(x, DType::Float32, false), normalized_shape, w, b, eps),
                     x.dtype(), false);
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

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  TS_CHECK(training || (running_mean.defined() && running_var.defined()), ValueError,
           "batch_norm: running_mean and running_var are required in eval mode (training=False); "
           "hint: pass the running statistics or training=True");
  check_norm_param_dtypes("batch_norm", x, running_mean, running_var, "running_mean",
                          "running_var");
  return ts::batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  const char* op = "group_norm";
  TS_CHECK(num_groups > 0, ValueError, op, ": num_groups must be positive, got ", num_groups);
  const bool divisible = input.ndim() >= 2 && input.dim(1) % num_groups == 0;
  if (divisible) {
    // PyTorch's _verify_batch_size: one value per group gives no variance.
    const int64_t n = input.dim(0) * input.dim(1) / num_groups;
    if (n * prod_from(input.shape(), 2) == 1) {
      std::string size = "[" + std::to_string(n) + ", " + std::to_string(num_groups);
      for (int64_t d = 2; d < input.ndim(); ++d) size += ", " + std::to_string(input.dim(d));
      throw ValueError(
          str("Expected more than 1 value per channel when training, got input size ", size, "]"));
    }
  }
  Tensor x = input, w = weight, b = bias;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("group_norm"), x, w, b);
  TS_CHECK(divisible, ValueError, op, ": ", x.ndim() > 1 ? std::to_string(x.dim(1)) : "?",
           " channels of input shape ", shape_str(x.shape()), " are not divisible into ",
           num_groups, " groups");
  if (check_norm_param_dtypes(op, x, w, b))  // 16-bit input, float32 parameters: in float32
    return astype_op(group_norm(astype_op(x, DType::Float32, false), num_groups, w, b, eps),
                     x.dtype(), false);
  if (x.numel() == 0) return affine(x, x, w, b, op);
  const int64_t n = x.dim(0), per_group = x.numel() / (n * num_groups);
  Tensor y;
  if (per_group > 1 && is_floating(x.dtype())) {
    // The batch-norm kernels: (N, G, rest) seen as a batch of one with N*G channels.
    const Tensor g = reshape(x, Shape{1, n * num_groups, per_group});
    y = reshape(ts::batch_norm(g, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.0, eps),
                x.shape());
  } else {
    const Tensor g = reshape(x, Shape{n, num_groups, -1});
    const Shape last{-1};
    const Tensor m = ts::mean(g, last, true), v = var(g, last, 0, true);
    y = reshape(divide(subtract(g, m), unary_op(sqrt_def, add(v, sc(eps)))), x.shape());
  }
  return affine(y, x, w, b, op);
}

Tensor instance_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                     const Tensor& weight, const Tensor& bias, bool use_input_stats,
                     double momentum, double eps) {
  const char* op = "instance_norm";
  Tensor x = input, w = weight, b = bias;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("instance_norm"), x, w, b);
  TS_CHECK(x.ndim() >= 3, ValueError, op,
           ": expected an input of at least 3 dims (N, C, *), got shape ", shape_str(x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1);
  TS_CHECK(!use_input_stats || prod_from(x.shape(), 2) > 1, ValueError, op,
           ": expected more than 1 spatial element per channel, got input shape ",
           shape_str(x.shape()));
  TS_CHECK(use_input_stats || (running_mean.defined() && running_var.defined()), ValueError, op,
           ": running_mean and running_var are required when use_input_stats=False");
  const auto rep = [&](const Tensor& v) { return v.defined() ? tile(v, Shape{n}) : Tensor(); };
  const Tensor rm = rep(running_mean), rv = rep(running_var);
  Shape flat = x.shape();
  flat[0] = 1;
  flat[1] = n * c;
  const Tensor y =
      ts::batch_norm(reshape(x, flat), rm, rv, rep(w), rep(b), use_input_stats, momentum, eps);
  if (use_input_stats && running_mean.defined() && running_var.defined()) {
    // the N updated copies average back into the buffers
    autograd::GradModeGuard no_grad(false);
    copy_(running_mean, ts::mean(reshape(rm, Shape{n, c}), Shape{0}, false));
    copy_(running_var, ts::mean(reshape(rv, Shape{n, c}), Shape{0}, false));
  }
  return reshape(y, x.shape());
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  const char* op = "local_response_norm";
  TS_CHECK(x.ndim() >= 3, ValueError, op, ": expected a 3-D or higher input (N, C, *), got shape ",
           shape_str(x.shape()));
  TS_CHECK(size >= 1, ValueError, op, ": size must be positive, got ", size);
  if (x.numel() == 0) return x;
  const Tensor sq = multiply(x, x);
  const int64_t c = x.dim(1);
  std::vector<Tensor> parts;
  const auto zeros = [&](int64_t len) {
    Shape s = x.shape();
    s[1] = len;
    Tensor z = Tensor::empty(s, sq.dtype(), x.device());
    fill_(z, Scalar::from_double(0.0));
    return z;
  };
  if (size / 2) parts.push_back(zeros(size / 2));
  parts.push_back(sq);
  if ((size - 1) / 2) parts.push_back(zeros((size - 1) / 2));
  const Tensor padded = parts.size() == 1 ? sq : concat(parts, 1);
  Tensor acc;
  for (int64_t j = 0; j < size; ++j) {
    const Tensor part = slice(padded, 1, j, j + c, 1);
    acc = acc.defined() ? add(acc, part) : part;
  }
  const Tensor div = binary_op(
      pow_def, add(multiply(acc, sc(alpha / static_cast<double>(size))), sc(k)), sc(beta));
  return divide(x, div);
}

Tensor normalize(const Tensor& x, double p, const Shape& dims, double eps) {
  const Tensor norm = vector_norm(x, dims, true, Scalar::from_double(p));
  const Tensor e = sc(eps);
  return divide(x, where(binary_op(less_def, norm, e), e, norm));
}

}  // namespace ts::nn
