#include "ops/linalg_torch_forms.h"

#include <cmath>
#include <limits>

#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/linalg.h"
#include "ops/linalg_ext.h"
#include "ops/pointwise_composite.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor num(double v) { return wrap_scalar(Scalar::from_double(v)); }

// L L^H, or U^H U with upper.
Tensor gram(const Tensor& factor, bool upper) {
  const Tensor h = matrix_transpose(conj(factor));
  return upper ? matmul(h, factor) : matmul(factor, h);
}

}  // namespace

Tensor logdet(const Tensor& x) {
  const auto [sign, logabs] = slogdet(x);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor zero = wrap_scalar(Scalar::from_int(0));
  if (is_complex(sign.dtype())) {
    const Tensor i = wrap_scalar(Scalar::from_complex({0.0, 1.0}));
    const Tensor out = add(astype_op(logabs, sign.dtype(), false), multiply(i, angle(sign)));
    return where(binary_op(equal_def, sign, zero), wrap_scalar(Scalar::from_complex({-inf, nan})),
                 out);
  }
  return where(binary_op(less_def, sign, zero), num(nan),
               where(binary_op(equal_def, sign, zero), num(-inf), logabs));
}

Tensor cholesky_inverse(const Tensor& factor, bool upper) { return inv(gram(factor, upper)); }

Tensor cholesky_solve(const Tensor& b, const Tensor& factor, bool upper) {
  return solve(gram(factor, upper), b);
}

}  // namespace ts
