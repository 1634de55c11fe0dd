#include "ops/pointwise_torch.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts {

std::pair<Tensor, Tensor> frexp(const Tensor& x) {
  TS_CHECK(is_floating(x.dtype()), RuntimeError, "frexp: only supports floating-point dtypes, got ",
           dtype_name(x.dtype()), " (input of shape ", shape_str(x.shape()),
           "); hint: convert with x.double()");
  // The exponents, and the scale 2**-exponent in two halves (each a float64 power of two: one
  // factor alone overflows for float64 subnormals), found on the CPU in float64 (exact for
  // every floating dtype).
  Tensor exponent = Tensor::empty(x.shape(), DType::Int32);
  Tensor lo = Tensor::empty(x.shape(), DType::Float64);
  Tensor hi = Tensor::empty(x.shape(), DType::Float64);
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor a = contiguous(to_device(astype(autograd::detach(x), DType::Float64, false), {}));
    const double* p = a.data<double>();
    int32_t* e = exponent.data<int32_t>();
    double* s0 = lo.data<double>();
    double* s1 = hi.data<double>();
    for (int64_t i = 0; i < a.numel(); ++i) {
      int k = 0;
      if (std::isfinite(p[i])) std::frexp(p[i], &k);
      e[i] = k;
      s0[i] = std::ldexp(1.0, -(k / 2));
      s1[i] = std::ldexp(1.0, -(k - k / 2));
    }
    if (!x.device().is_cpu()) {
      exponent = to_device(exponent, x.device());
      lo = to_device(lo, x.device());
      hi = to_device(hi, x.device());
    }
  }
  Tensor mantissa = astype_op(multiply(multiply(x, lo), hi), x.dtype(), false);
  return {std::move(mantissa), std::move(exponent)};
}

Tensor float_power(const Tensor& x, const Tensor& y) {
  const DType dt =
      is_complex(x.dtype()) || is_complex(y.dtype()) ? DType::Complex128 : DType::Float64;
  broadcast_shapes(x.shape(), y.shape(), "float_power");
  return pow(astype_op(x, dt, false), astype_op(y, dt, false));
}

Tensor complex(const Tensor& real, const Tensor& imag) {
  TS_CHECK(real.dtype() == imag.dtype(), RuntimeError,
           "complex: expected real and imag of the same dtype, got ", dtype_name(real.dtype()),
           " and ", dtype_name(imag.dtype()), "; hint: cast one with .to(other.dtype)");
  TS_CHECK(real.dtype() == DType::Float32 || real.dtype() == DType::Float64, RuntimeError,
           "complex: expected both inputs to be float32 or float64 tensors, got ",
           dtype_name(real.dtype()), " and ", dtype_name(imag.dtype()),
           "; hint: convert them with .float() or .double()");
  const Shape shape = broadcast_shapes(real.shape(), imag.shape(), "complex");
  return view_as_complex(
      stack({broadcast_to(real, shape), broadcast_to(imag, shape)}, static_cast<int64_t>(-1)));
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  TS_CHECK(abs.dtype() == angle.dtype(), RuntimeError,
           "polar: expected abs and angle of the same dtype, got ", dtype_name(abs.dtype()),
           " and ", dtype_name(angle.dtype()), "; hint: cast one with .to(other.dtype)");
  broadcast_shapes(abs.shape(), angle.shape(), "polar");
  return complex(multiply(abs, unary_op(cos_def, angle)), multiply(abs, unary_op(sin_def, angle)));
}

bool tensor_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  autograd::GradModeGuard no_grad(false);
  return item(all(binary_op(equal_def, a, b), std::nullopt, false)).to<bool>();
}

Tensor square_torch(const Tensor& x) {
  return unary_op(square_def, is_bool(x.dtype()) ? astype_op(x, DType::Int64, false) : x);
}

}  // namespace ts
