#include "ops/nn/activation.h"

#include "autograd/grad_mode.h"
#include "autograd/record_nn.h"
#include "core/error.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/nn_fused.h"

namespace ts::nn {

Tensor gelu(const Tensor& input, const std::string& approximate) {
  TS_CHECK(approximate == "none" || approximate == "tanh", ValueError,
           "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  TS_CHECK(!is_complex(input.dtype()) && !is_bool(input.dtype()), TypeError,
           "gelu: expected a real floating-point input, got ", dtype_name(input.dtype()));
  const Tensor x = is_floating(input.dtype()) ? input : astype_op(input, DType::Float32, false);
  const bool tanh_approx = approximate == "tanh";
  Tensor y;
  {
    autograd::GradModeGuard no_grad(false);
    y = ts::gelu(x, tanh_approx);
  }
  autograd::record_gelu(x, y, tanh_approx);
  return y;
}

Tensor relu(const Tensor& x) {
  if (!is_floating(x.dtype())) return binary_op(maximum_def, x, wrap_scalar(Scalar::from_int(0)));
  Tensor y;
  {
    autograd::GradModeGuard no_grad(false);
    y = binary_op(maximum_def, x, wrap_scalar(Scalar::from_int(0)));
  }
  autograd::record_relu(x, y);
  return y;
}

}  // namespace ts::nn
