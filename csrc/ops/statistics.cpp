#include "ops/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/elementwise_defs.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/rounding.h"
#include "ops/sort.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor int_scalar(int64_t v) { return wrap_scalar(Scalar::from_int(v)); }
Tensor float_scalar(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor is_nan(const Tensor& x) { return unary_op(isnan_def, x); }
Tensor both(const Tensor& a, const Tensor& b) { return binary_op(logical_and_def, a, b); }
Tensor either(const Tensor& a, const Tensor& b) { return binary_op(logical_or_def, a, b); }

// The positions 0..n-1 along d (int64), broadcast to `shape`.
Tensor positions(const Shape& shape, int64_t d, Device device) {
  Shape s = shape;
  for (auto& v : s) v = 1;
  s[d] = shape[d];
  const Tensor ar = arange(Scalar::from_int(0), Scalar::from_int(shape[d]), Scalar::from_int(1),
                           DType::Int64, device);
  return broadcast_to(reshape(ar, s), shape);
}

// Note [Running extreme by doubling]: (values, positions) of the running maximum (larger) or
// minimum along d, as a Hillis-Steele scan of log2(n) steps of whole-tensor ops (any device).
// Step s compares each slot with the winner of the s slots before it, which always holds an
// earlier position: it takes that one only when strictly better (a NaN beats a number), so ties
// keep the later position.
std::pair<Tensor, Tensor> running_extreme(const Tensor& x, int64_t d, bool larger) {
  const int64_t n = x.dim(d);
  Tensor v = x, at = positions(x.shape(), d, x.device());
  const bool floating = is_floating(x.dtype());
  for (int64_t s = 1; s < n; s *= 2) {
    const Tensor lo = slice(v, d, 0, n - s, 1), hi = slice(v, d, s, n, 1);
    Tensor better = binary_op(larger ? greater_def : less_def, lo, hi);
    if (floating) better = either(better, both(is_nan(lo), unary_op(logical_not_def, is_nan(hi))));
    v = concat({slice(v, d, 0, s, 1), where(better, lo, hi)}, d);
    at = concat(
        {slice(at, d, 0, s, 1), where(better, slice(at, d, 0, n - s, 1), slice(at, d, s, n, 1))},
        d);
  }
  return {v, at};
}

void check_real(const char* op, const Tensor& x) {
  TS_CHECK(!is_complex(x.dtype()), NotImplementedError, op, ": not implemented for ",
           dtype_name(x.dtype()), " (input shape ", shape_str(x.shape()),
           "); it needs an ordered real dtype");
}

std::pair<Tensor, Tensor> cum_extreme(const char* op, const Tensor& x, int64_t dim, bool larger) {
  check_real(op, x);
  const int64_t d = normalize_axis(dim, x.ndim() == 0 ? 1 : x.ndim(), op);
  const Tensor xd = x.ndim() == 0 ? reshape(x, Shape{1}) : x;
  Tensor at;
  {
    autograd::GradModeGuard no_grad(false);  // the indices carry no gradient
    at = running_extreme(autograd::detach(xd), d, larger).second;
  }
  const Tensor vals = take_along_axis(xd, at, d);
  if (x.ndim() == 0) return {reshape(vals, Shape{}), reshape(at, Shape{})};
  return {vals, at};
}

// Index (keepdim shape) of the last occurrence of the mode of each slice along d: in the
// sorted slice, the length of the run ending at j is j - (start of the run) + 1, the starts
// being a running maximum; the first longest run holds the smallest most frequent value.
Tensor mode_index(const Tensor& x, int64_t d) {
  const int64_t n = x.dim(d);
  const Tensor s = sort(x, d, false);  // NaNs sort last (Note [Sort order])
  const Tensor pos = positions(x.shape(), d, x.device());
  const Tensor lo = slice(s, d, 0, n - 1, 1), hi = slice(s, d, 1, n, 1);
  Tensor same = binary_op(equal_def, hi, lo);
  if (is_floating(x.dtype())) same = either(same, both(is_nan(hi), is_nan(lo)));
  const Tensor first = binary_op(equal_def, slice(pos, d, 0, 1, 1), int_scalar(0));  // all true
  const Tensor starts_run = concat({first, unary_op(logical_not_def, same)}, d);
  const Tensor start = running_extreme(where(starts_run, pos, int_scalar(0)), d, true).first;
  const Tensor run = add(subtract(pos, start), int_scalar(1));
  const Tensor value = take_along_axis(s, argmax(run, d, true), d);
  Tensor hit = binary_op(equal_def, x, value);
  if (is_floating(x.dtype())) hit = either(hit, both(is_nan(x), is_nan(value)));
  return amax(where(hit, pos, int_scalar(-1)), Shape{d}, true);
}

}  // namespace

Tensor logsumexp(const Tensor& input, const Axes& axes, bool keepdim) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor xc = input;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("logsumexp"), xc);
    return logsumexp(xc, axes, keepdim);
  }
  const Tensor x = is_inexact(input.dtype()) ? input : astype(input, DType::Float32, true);
  if (x.numel() == 0)  // no max to shift by; the sum over nothing is 0, its log -inf
    return unary_op(log_def, sum(unary_op(exp_def, x), axes, keepdim, std::nullopt));
  Tensor m;
  {
    autograd::GradModeGuard no_grad(false);
    m = amax(autograd::detach(x), axes, true);
    m = where(unary_op(isfinite_def, m), m, int_scalar(0));  // rows of all -inf stay finite
  }
  const Tensor shifted = unary_op(exp_def, subtract(x, m));
  Tensor out = add(unary_op(log_def, sum(shifted, axes, true, std::nullopt)), m);
  if (keepdim) return out;
  Shape dims;
  if (axes) {
    for (int64_t a : *axes) dims.push_back(normalize_axis(a, x.ndim(), "logsumexp"));
  } else {
    for (int64_t a = 0; a < x.ndim(); ++a) dims.push_back(a);
  }
  return squeeze(out, dims);
}

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  const int64_t d = normalize_axis(dim, x.ndim() == 0 ? 1 : x.ndim(), "logcumsumexp");
  if (x.ndim() == 0 || x.dim(d) == 0) return clone_op(x);
  Tensor m;
  {
    autograd::GradModeGuard no_grad(false);
    m = amax(autograd::detach(x), Shape{d}, true);
    m = where(unary_op(isfinite_def, m), m, int_scalar(0));  // slices of all -inf stay finite
  }
  const Tensor sums = cumulative_sum(unary_op(exp_def, subtract(x, m)), d, std::nullopt, false);
  return add(unary_op(log_def, sums), m);
}

Tensor msort(const Tensor& x) {
  if (x.ndim() == 0) return clone_op(x);
  return sort_with_indices(x, 0, false).first;
}

Tensor bucketize(const Tensor& x, const Tensor& boundaries, bool out_int32, bool right) {
  TS_CHECK(boundaries.ndim() == 1, RuntimeError,
           "bucketize: boundaries tensor must be 1 dimension, but got dim(", boundaries.ndim(),
           ") (boundaries shape ", shape_str(boundaries.shape()),
           "); pass the sorted bucket edges as a 1-D tensor");
  const Tensor out = searchsorted(boundaries, x, right, nullptr);
  return out_int32 ? astype(out, DType::Int32, true) : out;
}

namespace {

Tensor zeros(int64_t n, DType dtype, Device device) {
  Tensor out = Tensor::empty(Shape{n}, dtype, device);
  fill_(out, Scalar::from_int(0));
  return out;
}

}  // namespace

Tensor bincount(const Tensor& x, const Tensor* weights, int64_t minlength) {
  TS_CHECK(x.ndim() == 1 && !is_inexact(x.dtype()) && x.dtype() != DType::Bool, RuntimeError,
           "bincount: only 1-d non-negative integral inputs are supported, got ", x.ndim(), "-d ",
           dtype_name(x.dtype()), " (input shape ", shape_str(x.shape()), ")");
  const Tensor idx = astype(x, DType::Int64, false);
  int64_t n = 0;
  if (x.numel() != 0) {
    autograd::GradModeGuard no_grad(false);
    TS_CHECK(item(amin(idx, std::nullopt, false)).to<int64_t>() >= 0, RuntimeError,
             "bincount: input must be non-negative");
    n = item(amax(idx, std::nullopt, false)).to<int64_t>() + 1;
  }
  TS_CHECK(minlength >= 0, RuntimeError, "bincount: minlength should be >= 0, got ", minlength);
  n = std::max(n, minlength);
  if (weights == nullptr)
    return index_add(zeros(n, DType::Int64, x.device()), 0, idx,
                     broadcast_to(int_scalar(1), x.shape()));
  TS_CHECK(weights->shape() == x.shape(), RuntimeError,
           "bincount: weights should be 1-d and have the same length as input, got weights "
           "shape ",
           shape_str(weights->shape()), " and input shape ", shape_str(x.shape()));
  const DType dt = weights->dtype() == DType::Float32 || weights->dtype() == DType::Float64
                       ? weights->dtype()
                       : DType::Float64;
  return index_add(zeros(n, dt, x.device()), 0, idx, astype_op(*weights, dt, false));
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  TS_CHECK(is_floating(x.dtype()), RuntimeError, "histc: not implemented for ",
           dtype_name(x.dtype()), " (input shape ", shape_str(x.shape()),
           "); pass a floating-point tensor");
  TS_CHECK(bins > 0, RuntimeError, "histc: bins must be > 0, got ", bins);
  autograd::GradModeGuard no_grad(false);
  const Tensor a = astype(reshape(autograd::detach(x), Shape{x.numel()}), DType::Float64, true);
  double lo = min, hi = max;
  if (lo == hi && a.numel() != 0) {
    lo = item(amin(a, std::nullopt, false)).to<double>();
    hi = item(amax(a, std::nullopt, false)).to<double>();
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  // NaN data (its min and max are NaN) or an infinite range has no bins of finite width.
  TS_CHECK(std::isfinite(lo) && std::isfinite(hi), RuntimeError, "histc: range of [", lo, ", ", hi,
           "] is not finite (input shape ", shape_str(x.shape()),
           "); hint: pass finite min and max, or remove NaN and infinite values from the input");
  TS_CHECK(!(lo > hi), RuntimeError, "histc: max must be larger than min, got min=", min,
           " max=", max);
  const Tensor inside = both(binary_op(greater_equal_def, a, float_scalar(lo)),
                             binary_op(less_equal_def, a, float_scalar(hi)));
  const Tensor scaled =
      divide(multiply(subtract(a, float_scalar(lo)), float_scalar(bins)), float_scalar(hi - lo));
  Tensor bin = astype(where(inside, scaled, float_scalar(0)), DType::Int64, true);
  bin = clip(bin, int_scalar(0), int_scalar(bins - 1));
  const Tensor counts =
      index_add(zeros(bins, DType::Float64, x.device()), 0, bin, astype(inside, DType::Float64));
  return astype(counts, x.dtype(), true);
}

Tensor cov(const Tensor& input, int64_t correction, const Tensor* fweights,
           const Tensor* aweights) {
  TS_CHECK(input.ndim() <= 2, RuntimeError,
           "cov: expected input to have two or fewer dimensions but got an input with ",
           input.ndim(), " dimensions (input shape ", shape_str(input.shape()), ")");
  Tensor x = input.ndim() == 2 ? input : reshape(input, Shape{1, input.numel()});
  if (!is_floating(x.dtype())) x = astype_op(x, DType::Float32, false);
  const int64_t n = x.dim(1);
  // Weights of the wrong kind, count or sign made NaN or a broadcast product (as PyTorch,
  // RuntimeError): one non-negative weight per observation, integers for fweights.
  const auto check_weights = [&](const Tensor& wt, const char* name, bool integral) {
    TS_CHECK(wt.ndim() <= 1 && wt.numel() == n, RuntimeError, "cov: expected ", name,
             " to be 0-d or 1-d with one weight per observation (", n, " for input of shape ",
             shape_str(input.shape()), ") but got shape ", shape_str(wt.shape()));
    TS_CHECK(integral ? is_integral(wt.dtype()) && wt.dtype() != DType::Bool
                      : is_floating(wt.dtype()),
             RuntimeError, "cov: expected ", name, " to have ",
             integral ? "integral" : "floating point", " dtype but got ",
             dtype_name(wt.dtype()));
    TS_CHECK(wt.numel() == 0 || !(item(amin(wt, std::nullopt, false)).to<double>() < 0),
             RuntimeError, "cov: ", name, " cannot be negative");
  };
  Tensor w, aw;
  if (fweights != nullptr) {
    check_weights(*fweights, "fweights", true);
    w = astype_op(*fweights, x.dtype(), false);
  }
  if (aweights != nullptr) {
    check_weights(*aweights, "aweights", false);
    aw = astype_op(*aweights, x.dtype(), false);
    w = w.defined() ? multiply(w, aw) : aw;
  }
  Tensor c;
  if (!w.defined()) {
    const Tensor xm = subtract(x, mean(x, Shape{1}, true));
    c = divide(matmul(xm, matrix_transpose(conj(xm))),
               int_scalar(std::max<int64_t>(n - correction, 0)));
  } else {
    const Tensor wsum = sum(w, std::nullopt, false, std::nullopt);
    const Tensor avg = divide(sum(multiply(x, w), Shape{1}, true, std::nullopt), wsum);
    Tensor norm = wsum;
    if (correction != 0)
      norm = aweights == nullptr ? subtract(wsum, int_scalar(correction))
                                 : subtract(wsum, divide(multiply(int_scalar(correction),
                                                                  sum(multiply(w, aw), std::nullopt,
                                                                      false, std::nullopt)),
                                                         wsum));
    const Tensor xm = subtract(x, avg);
    c = divide(matmul(multiply(xm, w), matrix_transpose(conj(xm))),
               clip(norm, int_scalar(0), std::nullopt));
  }
  return input.ndim() < 2 ? reshape(c, Shape{}) : c;
}

Tensor corrcoef(const Tensor& x) {
  const Tensor c = cov(x, 1, nullptr, nullptr);
  if (c.ndim() == 0) return divide(c, c);
  const Tensor sd = unary_op(sqrt_def, diagonal(c, 0, 0, 1));
  const int64_t k = sd.numel();
  const Tensor r = divide(divide(c, reshape(sd, Shape{k, 1})), reshape(sd, Shape{1, k}));
  return clip(r, int_scalar(-1), int_scalar(1));
}

namespace {

// The terms of the trapezoidal rule along the normalized dim d: pairwise averages of y times
// the spacing.
Tensor trapezoid_terms(const char* op, const Tensor& y, const Tensor* x, std::optional<double> dx,
                       int64_t dim, int64_t* d) {
  TS_CHECK(y.ndim() != 0, IndexError, op, ": Dimension specified as ", dim,
           " but tensor has no dimensions");
  TS_CHECK(x == nullptr || !dx, TypeError, op,
           "() received an invalid combination of arguments: x and dx cannot both be given");
  *d = normalize_axis(dim, y.ndim(), op);
  const int64_t n = y.dim(*d), m = std::max<int64_t>(n - 1, 0);
  const Tensor lo = slice(y, *d, 0, m, 1), hi = n > 0 ? slice(y, *d, 1, n, 1) : lo;
  const Tensor avg = divide(add(lo, hi), int_scalar(2));
  if (x == nullptr) return multiply(avg, float_scalar(dx.value_or(1.0)));
  if (x->ndim() != 1) return multiply(avg, diff(*x, *d, 1, nullptr, nullptr));
  TS_CHECK(x->dim(0) == n, RuntimeError, op,
           ": There must be one `x` value for each sample point (x shape ", shape_str(x->shape()),
           ", y shape ", shape_str(y.shape()), ", dim ", *d, ")");
  Shape s(y.ndim(), 1);
  s[*d] = m;
  return multiply(avg, reshape(diff(*x, 0, 1, nullptr, nullptr), s));
}

}  // namespace

Tensor trapezoid(const Tensor& y, const Tensor* x, std::optional<double> dx, int64_t dim) {
  int64_t d = 0;
  const Tensor terms = trapezoid_terms("trapezoid", y, x, dx, dim, &d);
  return sum(terms, Shape{d}, false, std::nullopt);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor* x, std::optional<double> dx,
                            int64_t dim) {
  int64_t d = 0;
  const Tensor terms = trapezoid_terms("cumulative_trapezoid", y, x, dx, dim, &d);
  return cumulative_sum(terms, d, std::nullopt, false);
}

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) {
  return cum_extreme("cummax", x, dim, true);
}

std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) {
  return cum_extreme("cummin", x, dim, false);
}

std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim) {
  check_real("mode", x);
  const int64_t d = normalize_axis(dim, x.ndim() == 0 ? 1 : x.ndim(), "mode");
  const Tensor xd = x.ndim() == 0 ? reshape(x, Shape{1}) : x;
  TS_CHECK(xd.dim(d) != 0, IndexError, "mode(): Expected reduction dim ", d,
           " to have non-zero size (input shape ", shape_str(x.shape()), ")");
  Tensor at;
  {
    autograd::GradModeGuard no_grad(false);
    at = mode_index(autograd::detach(xd), d);
  }
  const Tensor vals = take_along_axis(xd, at, d);
  if (x.ndim() == 0) return {reshape(vals, Shape{}), reshape(at, Shape{})};
  if (!keepdim) return {squeeze(vals, Shape{d}), squeeze(at, Shape{d})};
  return {vals, at};
}

Tensor quantile(const Tensor& input, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation, bool ignore_nan) {
  const char* op = ignore_nan ? "nanquantile" : "quantile";
  TS_CHECK(input.dtype() == DType::Float32 || input.dtype() == DType::Float64, RuntimeError, op,
           ": input tensor must be either float or double dtype, got ", dtype_name(input.dtype()),
           " (input shape ", shape_str(input.shape()), "); cast it with .float() or .double()");
  const bool linear = interpolation == "linear", lower = interpolation == "lower",
             higher = interpolation == "higher", midpoint = interpolation == "midpoint",
             nearest = interpolation == "nearest";
  TS_CHECK(linear || lower || higher || midpoint || nearest, ValueError, op,
           ": interpolation must be one of ('linear', 'lower', 'higher', 'midpoint', "
           "'nearest'), got '",
           interpolation, "'");
  TS_CHECK(q.ndim() <= 1, RuntimeError, op, ": q must be a scalar or 1D tensor, got ", q.ndim(),
           "D (q shape ", shape_str(q.shape()), ")");
  TS_CHECK(q.dtype() == input.dtype(), RuntimeError, op,
           ": q tensor must be same dtype as the input tensor, got q ", dtype_name(q.dtype()),
           " and input ", dtype_name(input.dtype()));
  TS_CHECK(input.numel() != 0, RuntimeError, op, ": input tensor must be non-empty (input shape ",
           shape_str(input.shape()), ")");
  const Tensor qv = reshape(q, Shape{q.numel()});
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor in_range = both(binary_op(greater_equal_def, qv, int_scalar(0)),
                                 binary_op(less_equal_def, qv, int_scalar(1)));
    TS_CHECK(item(all(in_range, std::nullopt, false)).to<bool>(), RuntimeError, op,
             ": q values must be in the range [0, 1]");
  }
  Tensor x;
  int64_t d = 0;
  if (!dim) {
    x = reshape(input, Shape{input.numel()});
  } else {
    d = normalize_axis(*dim, input.ndim() == 0 ? 1 : input.ndim(), op);
    x = input.ndim() == 0 ? reshape(input, Shape{1}) : input;
  }
  const int64_t n = x.dim(d);
  TS_CHECK(n != 0, RuntimeError, op, ": input tensor must be non-empty along dim ", d,
           " (input shape ", shape_str(input.shape()), ")");
  // Every q at once along a new leading dim: the sorted slices broadcast to (Q, *x.shape), the
  // positions (Q, *x.shape with dim d of size 1).
  const Tensor sorted = sort_with_indices(x, d, false).first;
  Shape sb{qv.numel()};
  for (int64_t v : sorted.shape()) sb.push_back(v);
  const Tensor s = broadcast_to(expand_dims(sorted, 0), sb);
  const int64_t e = d + 1;
  Tensor nans, last;
  {
    autograd::GradModeGuard no_grad(false);
    nans = expand_dims(count_nonzero(is_nan(x), Shape{d}, true), 0);
    const Tensor count = ignore_nan ? subtract(int_scalar(n), nans) : int_scalar(n);
    last = clip(subtract(count, int_scalar(1)), int_scalar(0), std::nullopt);
    if (!ignore_nan) last = broadcast_to(last, nans.shape());
  }
  Shape qs(x.ndim() + 1, 1);
  qs[0] = qv.numel();
  const Tensor pos = multiply(astype(last, input.dtype(), true), reshape(qv, qs));
  const auto at = [&](const Tensor& p) {
    return take_along_axis(s, astype(p, DType::Int64, true), e);
  };
  const Tensor floor_pos = unary_op(floor_def, pos);
  Tensor r;
  if (nearest) {
    r = at(unary_op(round_def, pos));
  } else if (lower) {
    r = at(floor_pos);
  } else {
    const Tensor vhi = at(unary_op(ceil_def, pos));
    if (higher) {
      r = vhi;
    } else {
      const Tensor vlo = at(floor_pos);
      const Tensor w = midpoint ? float_scalar(0.5) : subtract(pos, floor_pos);
      r = add(vlo, multiply(subtract(vhi, vlo), w));
    }
  }
  const Tensor nan_value = float_scalar(std::numeric_limits<double>::quiet_NaN());
  if (ignore_nan)
    r = where(binary_op(equal_def, nans, int_scalar(n)), nan_value, r);
  else
    r = where(binary_op(greater_def, nans, int_scalar(0)), nan_value, r);
  if (!dim) {
    Shape keep{qv.numel()};
    if (keepdim)
      for (int64_t i = 0; i < input.ndim(); ++i) keep.push_back(1);
    r = reshape(r, keep);
  } else if (input.ndim() == 0 || !keepdim) {
    r = squeeze(r, Shape{e});
  }
  return q.ndim() == 0 ? squeeze(r, Shape{0}) : r;
}

}  // namespace ts
