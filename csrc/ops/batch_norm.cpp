#include "ops/batch_norm.h"

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/memory_format.h"

namespace ts {

TS_DEFINE_STUB(BatchNormStatsKernel, batch_norm_stats_stub, "batch_norm");
TS_DEFINE_STUB(BatchNormApplyKernel, batch_norm_apply_stub, "batch_norm");
TS_DEFINE_STUB(BatchNormBackwardKernel, batch_norm_backward_stub, "batch_norm_backward");

namespace {

DType stat_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_channel_vector(const Tensor& t, const Tensor& x, const char* what) {
  if (!t.defined()) return;
  const int64_t C = x.dim(1);
  TS_CHECK(t.numel() == C, ValueError, "batch_norm: ", what, " of shape ", shape_str(t.shape()),
           " does not match ", C, " channels of input of shape ", shape_str(x.shape()));
  TS_CHECK(t.device() == x.device(), ValueError, "batch_norm: input on ", x.device().str(),
           " and ", what, " on ", t.device().str());
  TS_CHECK(is_floating(t.dtype()), TypeError, "batch_norm: ", what,
           " must be floating-point, got ", dtype_name(t.dtype()));
}

Tensor rstd_of(const Tensor& var, double eps) {
  return unary_op(reciprocal_def, unary_op(sqrt_def, add(var, wrap_scalar(Scalar::from_double(eps)))));
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("batch_norm"));  // no cast; none inside
  TS_CHECK(x.ndim() >= 2, ValueError,
           "batch_norm: expected at least 2-D input (N, C, ...), got shape ", shape_str(x.shape()));
  TS_CHECK(is_floating(x.dtype()), TypeError,
           "batch_norm: expected a floating-point input (float16, bfloat16, float32, float64), "
           "got ",
           dtype_name(x.dtype()));
  check_channel_vector(running_mean, x, "running_mean");
  check_channel_vector(running_var, x, "running_var");
  check_channel_vector(weight, x, "weight");
  check_channel_vector(bias, x, "bias");
  // PyTorch's mixed precision: a 16-bit input may come with float32 parameters (autocast
  // leaves batch norm's weights in float32); the output keeps the input's dtype.
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  for (const Tensor* t : {&weight, &bias})
    TS_CHECK(!t->defined() || t->dtype() == x.dtype() || (half && t->dtype() == DType::Float32),
             TypeError, "batch_norm: weight/bias dtype ", dtype_name(t->dtype()),
             " differs from input dtype ", dtype_name(x.dtype()),
             " (a float16/bfloat16 input may have float32 weight and bias)");
  TS_CHECK(!weight.defined() || !bias.defined() || weight.dtype() == bias.dtype(), TypeError,
           "batch_norm: weight (", dtype_name(weight.dtype()), ") and bias (",
           dtype_name(bias.dtype()), ") must have the same dtype");
  const int64_t C = x.dim(1);
  const int64_t count = C > 0 ? x.numel() / C : 0;
  const bool use_batch = training || !running_mean.defined() || !running_var.defined();
  if (use_batch)
    TS_CHECK(count != 1, ValueError,
             "batch_norm: expected more than 1 value per channel when training, got input of "
             "shape ",
             shape_str(x.shape()));
  const DType sd = stat_dtype(x.dtype());
  const Device dev = x.device();
  Tensor mean = Tensor::empty(Shape{C}, sd, dev), rstd;
  // The CUDA kernels also take channels-last tensors as they are (the CPU's, contiguous ones).
  const bool cl = !dev.is_cpu() && is_channels_last(x);
  Tensor y = cl ? empty_channels_last(x.shape(), x.dtype(), dev)
                : Tensor::empty(x.shape(), x.dtype(), dev);
  const Tensor xc = cl ? x : contiguous(x);
  {
    autograd::GradModeGuard no_grad(false);
    if (use_batch) {
      Tensor var = Tensor::empty(Shape{C}, sd, dev);
      if (count > 0) {
        batch_norm_stats_stub.get(dev)(xc, mean, var);
      } else {
        fill_(mean, Scalar::from_double(0));
        fill_(var, Scalar::from_double(0));
      }
      rstd = rstd_of(var, eps);
      if (training && count > 0) {
        const Tensor m = wrap_scalar(Scalar::from_double(momentum));
        const Tensor keep = wrap_scalar(Scalar::from_double(1 - momentum));
        if (running_mean.defined())
          copy_(running_mean, add(multiply(keep, running_mean), multiply(m, mean)));
        if (running_var.defined()) {
          const Tensor unbiased =
              multiply(var, wrap_scalar(Scalar::from_double(double(count) / double(count - 1))));
          copy_(running_var, add(multiply(keep, running_var), multiply(m, unbiased)));
        }
      }
    } else {
      copy_(mean, running_mean);
      rstd = rstd_of(astype(running_var, sd, false), eps);
    }
    if (x.numel() > 0) {
      // The kernels take the affine parameters in the statistics dtype.
      const Tensor wc = weight.defined() ? contiguous(astype(weight, sd, false)) : Tensor();
      const Tensor bc = bias.defined() ? contiguous(astype(bias, sd, false)) : Tensor();
      batch_norm_apply_stub.get(dev)(xc, mean, contiguous(rstd), weight.defined() ? &wc : nullptr,
                                     bias.defined() ? &bc : nullptr, y);
    }
  }
  autograd::record_batch_norm(x, weight, bias, y, x, mean, rstd, use_batch, eps);
  return is_channels_last(x) ? to_channels_last(y) : y;
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& gy, const Tensor& x,
                                                       const Tensor& mean, const Tensor& rstd,
                                                       const Tensor& weight, bool training,
                                                       bool need_x, bool need_w, bool need_b) {
  TS_CHECK(gy.shape() == x.shape() && gy.dtype() == x.dtype(), ValueError,
           "batch_norm_backward: gradient ", shape_str(gy.shape()), " ", dtype_name(gy.dtype()),
           " does not match input ", shape_str(x.shape()), " ", dtype_name(x.dtype()));
  const int64_t C = x.dim(1);
  const Device dev = x.device();
  // On CUDA a channels-last x keeps its layout, and gy and gx take it too.
  const bool cl = !dev.is_cpu() && is_channels_last(x);
  Tensor gx;
  if (need_x)
    gx = cl ? empty_channels_last(x.shape(), x.dtype(), dev)
            : Tensor::empty(x.shape(), x.dtype(), dev);
  // gw/gb come out of the kernels in the statistics dtype, then take the parameters' dtype.
  const DType sd = stat_dtype(x.dtype()), pd = weight.defined() ? weight.dtype() : x.dtype();
  Tensor gw = need_w ? Tensor::empty(Shape{C}, sd, dev) : Tensor();
  Tensor gb = need_b ? Tensor::empty(Shape{C}, sd, dev) : Tensor();
  if (x.numel() == 0) {
    for (Tensor* t : {&gw, &gb})
      if (t->defined()) fill_(*t, Scalar::from_double(0));
  } else {
    const Tensor wc = weight.defined() ? contiguous(astype(weight, sd, false)) : Tensor();
    batch_norm_backward_stub.get(dev)(cl ? to_channels_last(gy) : contiguous(gy),
                                      cl ? x : contiguous(x), contiguous(mean),
                                      contiguous(rstd), weight.defined() ? &wc : nullptr,
                                      need_x ? &gx : nullptr, need_w ? &gw : nullptr,
                                      need_b ? &gb : nullptr, training);
  }
  for (Tensor* t : {&gw, &gb})
    if (t->defined()) *t = astype(*t, pd, false);
  return {gx, gw, gb};
}

}  // namespace ts
