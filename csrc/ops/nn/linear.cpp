#include "ops/nn/linear.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/linalg.h"
#include "ops/linear.h"
#include "ops/nn/operand_dtype.h"
#include "ops/views.h"

namespace ts::nn {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  Tensor x = input, w = weight, b = bias;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("linear"), x, w, b);
  check_same_dtype("linear", "input", x, {{"weight", &w}, {"bias", &b}});
  const DType dt = x.dtype();
  const bool fused =
      x.ndim() >= 1 && w.ndim() == 2 && is_floating(dt) && w.dtype() == dt &&
      w.device() == x.device() &&
      (!b.defined() || (b.ndim() == 1 && b.dtype() == dt && b.device() == x.device()));
  if (!fused) {  // broadcasting biases, integer inputs: the general ops
    const Tensor y = matmul(x, w.ndim() >= 2 ? matrix_transpose(w) : w);
    return b.defined() ? add(y, b) : y;
  }
  TS_CHECK(x.dim(x.ndim() - 1) == w.dim(1), ValueError, "linear: input of shape ",
           shape_str(x.shape()), " does not match weight of shape ", shape_str(w.shape()), ": ",
           x.dim(x.ndim() - 1), " input features != ", w.dim(1),
           " (weight is (out_features, in_features))");
  TS_CHECK(!b.defined() || b.dim(0) == w.dim(0), ValueError, "linear: bias of shape ",
           shape_str(b.shape()), " does not match ", w.dim(0), " output features of weight ",
           shape_str(w.shape()));
  Tensor y;
  {
    autograd::GradModeGuard no_grad(false);
    y = b.defined() ? linear_bias(x, w, b) : matmul(x, matrix_transpose(w));
  }
  autograd::record_linear(x, w, b, y);
  return y;
}

}  // namespace ts::nn
