#include "ops/linalg_torch_forms.h"

#include <cmath>
#include <limits>

#include "core/checked_math.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/cumulative.h"
#include "ops/linalg.h"
#include "ops/linalg_ext.h"
#include "ops/manipulation.h"
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

Tensor vander(const Tensor& x0, std::optional<int64_t> N, bool increasing) {
  TS_CHECK(x0.ndim() == 1, ValueError, "vander: x must be a one-dimensional tensor, got shape ",
           shape_str(x0.shape()));
  const int64_t rows = x0.dim(0), n = N ? *N : rows;
  TS_CHECK(n >= 0, ValueError, "vander: N must be non-negative, got ", n);
  const bool exact = is_bool(x0.dtype()) || is_integral(x0.dtype());
  const Tensor x = exact ? astype_op(x0, DType::Int64, false) : x0;
  checked_mul(checked_mul(rows, n, "vander"), itemsize(x.dtype()), "vander");
  Tensor ones = Tensor::empty(Shape{rows, std::min<int64_t>(n, 1)}, x.dtype(), x.device());
  fill_(ones, Scalar::from_int(1));
  if (n <= 1) return ones;
  const Tensor powers = cumulative_prod(
      broadcast_to(reshape(x, Shape{rows, 1}), Shape{rows, n - 1}), 1, std::nullopt, false);
  const Tensor out = concat({ones, powers}, 1);
  return increasing ? out : flip(out, Shape{1});
}

}  // namespace ts
