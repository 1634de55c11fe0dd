#include "ops/order_stats.h"

#include <limits>

#include "autograd/function.h"
#include "autograd/record_order_stats.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise_defs.h"
#include "ops/indexing_advanced.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/rounding.h"
#include "ops/sort.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor int_scalar(int64_t v) { return wrap_scalar(Scalar::from_int(v)); }

// (values, indices) of the element `pick(xd, d)` (int64 indices, keepdim shape) picks in each
// slice along `dim` of x (a 0-d x read as shape (1,)).
template <class Pick>
std::pair<Tensor, Tensor> pick_along(const char* op, const Tensor& x, int64_t dim, bool keepdim,
                                     const Pick& pick) {
  const int64_t d = normalize_axis(dim, x.ndim() == 0 ? 1 : x.ndim(), op);
  const Tensor xd = x.ndim() == 0 ? reshape(x, Shape{1}) : x;
  TS_CHECK(xd.dim(d) != 0, IndexError, op, "(): Expected reduction dim ", d,
           " to have non-zero size (input shape ", shape_str(x.shape()),
           "); hint: reduce over a non-empty dim");
  Tensor idx;
  {
    autograd::GradModeGuard no_grad(false);  // the indices carry no gradient
    idx = pick(xd, d);
  }
  Tensor vals = take_along_axis(xd, idx, d);
  if (x.ndim() == 0) return {reshape(vals, Shape{}), reshape(idx, Shape{})};
  if (!keepdim) return {squeeze(vals, Shape{d}), squeeze(idx, Shape{d})};
  return {vals, idx};
}

void check_orderable(const char* op, const Tensor& x) {
  TS_CHECK(!is_complex(x.dtype()) && x.dtype() != DType::Bool, RuntimeError, op,
           ": not implemented for ", dtype_name(x.dtype()), " (input shape ", shape_str(x.shape()),
           "); it needs an ordered real dtype");
}

// Index (keepdim shape) of the lower median of each slice along d.
Tensor median_index(const Tensor& x, int64_t d, bool ignore_nan) {
  const Tensor order = argsort(x, d, false);  // NaNs sort last (Note [Sort order])
  const int64_t n = x.dim(d);
  Tensor k;
  if (is_floating(x.dtype())) {
    const Tensor nans = count_nonzero(unary_op(isnan_def, x), Shape{d}, true);
    if (ignore_nan) {  // lower median of the non-NaN values (all NaN: the first NaN)
      const Tensor valid = subtract(int_scalar(n), nans);
      k = where(binary_op(greater_def, valid, int_scalar(0)),
                binary_op(floor_divide_def, subtract(valid, int_scalar(1)), int_scalar(2)),
                int_scalar(0));
    } else {  // any NaN makes the median NaN: point at the first NaN (sorted last)
      k = where(binary_op(greater_def, nans, int_scalar(0)), subtract(int_scalar(n), nans),
                int_scalar((n - 1) / 2));
    }
  } else {
    Shape s = x.shape();
    s[d] = 1;
    k = broadcast_to(reshape(int_scalar((n - 1) / 2), Shape{}), s);
    k = astype(k, DType::Int64, true);
  }
  return take_along_axis(order, astype(k, DType::Int64, false), d);
}

}  // namespace

std::pair<Tensor, Tensor> max_with_indices(const Tensor& x, int64_t dim, bool keepdim) {
  return pick_along("max", x, dim, keepdim,
                    [](const Tensor& xd, int64_t d) { return argmax(xd, d, true); });
}

std::pair<Tensor, Tensor> min_with_indices(const Tensor& x, int64_t dim, bool keepdim) {
  return pick_along("min", x, dim, keepdim,
                    [](const Tensor& xd, int64_t d) { return argmin(xd, d, true); });
}

std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  check_orderable("kthvalue", x);
  const int64_t d = normalize_axis(dim, x.ndim() == 0 ? 1 : x.ndim(), "kthvalue");
  const int64_t n = x.ndim() == 0 ? 1 : x.dim(d);
  // PyTorch: an empty dim is pick_along's IndexError, a k outside [1, n] a RuntimeError
  TS_CHECK(n == 0 || (k >= 1 && k <= n), RuntimeError, "kthvalue(): selected number k (", k,
           ") out of range for dimension ", d, " of size ", n, "; hint: k must be in [1, ", n,
           "]");
  return pick_along("kthvalue", x, dim, keepdim, [k](const Tensor& xd, int64_t dd) {
    return slice(argsort(xd, dd, false), dd, k - 1, k, 1);
  });
}

std::pair<Tensor, Tensor> median_with_indices(const Tensor& x, int64_t dim, bool keepdim,
                                              bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_orderable(op, x);
  return pick_along(op, x, dim, keepdim, [ignore_nan](const Tensor& xd, int64_t d) {
    return median_index(xd, d, ignore_nan);
  });
}

Tensor median_all(const Tensor& x, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_orderable(op, x);
  if (x.numel() == 0) {  // PyTorch fills NaN, which its CPU converts to these for integers
    Scalar fill = Scalar::from_double(std::numeric_limits<double>::quiet_NaN());
    if (!is_floating(x.dtype())) {
      fill = x.dtype() == DType::Int32    ? Scalar::from_int(std::numeric_limits<int32_t>::min())
             : x.dtype() == DType::Int64  ? Scalar::from_int(std::numeric_limits<int64_t>::min())
             : x.dtype() == DType::UInt64 ? Scalar::from_uint(uint64_t{1} << 63)
                                          : Scalar::from_int(0);
    }
    Tensor out = Tensor::empty(Shape{}, x.dtype(), x.device());
    fill_(out, fill);
    return out;
  }
  Tensor value;
  {
    autograd::GradModeGuard no_grad(false);
    value = median_with_indices(reshape(x, Shape{x.numel()}), 0, false, ignore_nan).first;
  }
  value.impl()->is_view = false;
  autograd::record_evenly_distributed(x, value);
  return value;
}

}  // namespace ts
