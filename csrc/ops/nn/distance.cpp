// pdist and one_hot: distance.h.
#include "ops/nn/distance.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/indexing_advanced.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

namespace {

Tensor num(double v) { return wrap_scalar(Scalar::from_double(v)); }

Tensor rows_at(const Tensor& x, const std::vector<int64_t>& rows) {
  Tensor idx = Tensor::empty(Shape{static_cast<int64_t>(rows.size())}, DType::Int64);
  std::copy(rows.begin(), rows.end(), idx.data<int64_t>());
  if (!x.device().is_cpu()) idx = to_device(idx, x.device());
  return index_select(x, 0, idx);
}

}  // namespace

Tensor pdist(const Tensor& x, double p) {
  TS_CHECK(x.ndim() == 2, ValueError, "pdist: expected a 2-D input (N, M), got shape ",
           shape_str(x.shape()));
  TS_CHECK(p >= 0, ValueError, "pdist: p must be non-negative, got ", p);
  TS_CHECK(is_floating(x.dtype()), TypeError, "pdist: only supports floating-point dtypes, got ",
           dtype_name(x.dtype()), "; cast the input to a floating dtype");
  const int64_t n = x.dim(0);
  std::vector<int64_t> is, js;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      is.push_back(i);
      js.push_back(j);
    }
  const Tensor d = subtract(rows_at(x, is), rows_at(x, js));
  const Tensor a = unary_op(abs_def, d);
  const Shape last{1};
  if (p == 0)  // zero gradient, still recorded
    return sum(
        add(astype(binary_op(not_equal_def, a, num(0)), x.dtype(), false), multiply(num(0), a)),
        last, false, std::nullopt);
  if (std::isinf(p)) {
    if (x.dim(1)) return max(a, last, false);
    Tensor z = Tensor::empty(Shape{static_cast<int64_t>(is.size())}, x.dtype(), x.device());
    fill_(z, Scalar::from_int(0));
    return z;
  }
  if (p == 1) return sum(a, last, false, std::nullopt);
  Tensor s;
  if (p == 2) {
    s = sum(multiply(d, d), last, false, std::nullopt);
  } else {  // |d|^p with zero gradient at d == 0 (the derivative diverges there for p < 1)
    const Tensor nz = binary_op(greater_def, a, num(0));
    s = sum(where(nz, pow(where(nz, a, num(1)), num(p)), num(0)), last, false, std::nullopt);
  }
  const Tensor pos = binary_op(greater_def, s, num(0));
  const Tensor safe = where(pos, s, num(1));
  const Tensor root = p == 2 ? unary_op(sqrt_def, safe) : pow(safe, num(1.0 / p));
  return where(pos, root, num(0));
}

Tensor one_hot(const Tensor& x, int64_t num_classes) {
  const char* op = "one_hot";
  TS_CHECK(is_integral(x.dtype()) && x.dtype() != DType::Bool, TypeError, op,
           ": expected an integer tensor of class indices, got ", dtype_name(x.dtype()));
  // Only -1 means "infer": -2 was inferred too (PyTorch raises)
  TS_CHECK(num_classes >= -1, ValueError, op, ": num_classes must be -1 (inferred from the "
           "largest class value) or non-negative, got ", num_classes);
  if (x.numel()) {
    const int64_t lo = item(min(x, std::nullopt, false)).to<int64_t>();
    const int64_t hi = item(max(x, std::nullopt, false)).to<int64_t>();
    if (num_classes < 0) num_classes = hi + 1;
    TS_CHECK(lo >= 0, ValueError, op, ": class values must be non-negative, got ", lo,
             " (class values must be in [0, ", num_classes, "))");
    TS_CHECK(hi < num_classes, ValueError, op, ": class values must be smaller than num_classes ",
             num_classes, ", got ", hi, " (class values must be in [0, ", num_classes, "))");
  } else {
    TS_CHECK(num_classes >= 0, ValueError, op,
             ": cannot infer the number of classes from an empty tensor; pass num_classes");
  }
  const Tensor classes = arange(Scalar::from_int(0), Scalar::from_int(num_classes),
                                Scalar::from_int(1), x.dtype(), x.device());
  return astype(binary_op(equal_def, expand_dims(x, -1), classes), DType::Int64, false);
}

}  // namespace ts::nn
