#include "ops/statistics_torch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/default_dtype.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg_composite.h"
#include "ops/manipulation.h"
#include "ops/nn/resample.h"
#include "ops/statistics.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

Tensor num(double v) { return wrap_scalar(Scalar::from_double(v)); }

// The normalized dims (nullopt: all), as torch.norm reads them.
Axes norm_axes(const std::optional<Shape>& dims, int64_t ndim) {
  if (!dims || dims->empty() || ndim == 0) {
    if (dims && ndim == 0)
      for (int64_t d : *dims) normalize_axis(d, 1, "norm");  // a 0-d x takes dim 0 / -1
    return std::nullopt;
  }
  Shape out;
  for (int64_t d : *dims) out.push_back(normalize_axis(d, ndim, "norm"));
  return out;
}

// torch.linspace's values (computed in float for float32 and below, else double; the second
// half stepped back from the end), which torch.histogram's edges are (NumPy's differ in the
// last bits).
template <class T>
void fill_linspace(double lo, double hi, int64_t n, T* out) {
  const T start = static_cast<T>(lo), end = static_cast<T>(hi);
  const T step = n > 1 ? (end - start) / static_cast<T>(n - 1) : T(0);
  const int64_t half = n / 2;
  for (int64_t i = 0; i < n; ++i)
    out[i] = i < half ? start + step * static_cast<T>(i) : end - step * static_cast<T>(n - i - 1);
}

Tensor torch_linspace(double lo, double hi, int64_t n, DType dt, Device dev) {
  const bool wide = dt == DType::Float64;
  Tensor v = Tensor::empty(Shape{n}, wide ? DType::Float64 : DType::Float32);
  if (wide)
    fill_linspace(lo, hi, n, v.data<double>());
  else
    fill_linspace(lo, hi, n, v.data<float>());
  v = astype(v, dt, false);
  return dev.is_cpu() ? v : to_device(v, dev);
}

}  // namespace

Tensor torch_norm(const Tensor& input, const NormOrd& ord, const std::optional<Shape>& dims,
                  bool keepdim, std::optional<DType> dtype) {
  TS_CHECK(is_inexact(input.dtype()), RuntimeError,
           "norm: input dtype should be either floating point or complex, got ",
           dtype_name(input.dtype()), " (input of shape ", shape_str(input.shape()),
           "); hint: convert the input with x.float()");
  TS_CHECK(!dtype || promote_types(input.dtype(), *dtype) == *dtype, RuntimeError,
           "norm: the dtype of the input (", dtype_name(input.dtype()),
           ") should be convertible without narrowing to the specified dtype (",
           dtype ? dtype_name(*dtype) : "", "); hint: pass a wider dtype or cast the input first");
  const Tensor x = dtype ? astype_op(input, *dtype, false) : input;
  if (ord.name == "nuc") {
    Shape d{0, 1};
    if (dims && !dims->empty()) d = *dims;
    TS_CHECK(d.size() == 2, RuntimeError, "norm: the nuclear norm needs exactly two dims, got ",
             d.size(), " (input of shape ", shape_str(x.shape()), ")");
    return matrix_norm(x, MatrixNormOrd{0, "nuc"}, normalize_axis(d[0], x.ndim(), "norm"),
                       normalize_axis(d[1], x.ndim(), "norm"), keepdim);
  }
  TS_CHECK(ord.name.empty() || ord.name == "fro", RuntimeError, "norm: invalid norm type '",
           ord.name, "'; hint: p is a number, 'fro' or 'nuc'");
  const Scalar p = ord.name == "fro" ? Scalar::from_int(2) : ord.p;
  const Axes axes = norm_axes(dims, x.ndim());
  const double pv = p.to<double>();
  if (std::isinf(pv)) {
    const Shape all = [&] {
      Shape s;
      for (int64_t i = 0; i < x.ndim(); ++i) s.push_back(i);
      return s;
    }();
    for (int64_t d : axes ? *axes : all)
      TS_CHECK(x.dim(d) != 0, RuntimeError, "norm: cannot compute the ", pv,
               " norm over dimension ", d, " of shape ", shape_str(x.shape()),
               ": it is empty and max/min have no identity");
  }
  return vector_norm(x, axes, keepdim, p);
}

Tensor renorm(const Tensor& x, double p, int64_t dim, double maxnorm) {
  TS_CHECK(x.ndim() > 1, RuntimeError, "renorm: input needs at least 2 dimensions, got ", x.ndim(),
           " dimensions (shape ", shape_str(x.shape()), ")");
  TS_CHECK(p > 0, RuntimeError, "renorm: non-positive norm not supported, got p=", p);
  TS_CHECK(maxnorm >= 0, RuntimeError, "renorm: expected maxnorm to be >= 0 but got ", maxnorm);
  const int64_t d = normalize_axis(dim, x.ndim(), "renorm");
  Shape others;
  for (int64_t i = 0; i < x.ndim(); ++i)
    if (i != d) others.push_back(i);
  const Tensor norms = vector_norm(x, others, true, Scalar::from_double(p));
  const Tensor factor = where(binary_op(greater_def, norms, num(maxnorm)),
                              divide(num(maxnorm), add(norms, num(1e-7))), num(1.0));
  return multiply(x, astype_op(factor, x.dtype(), false));
}

Tensor sum_to_size(const Tensor& x, const Shape& size) {
  const int64_t lead = x.ndim() - static_cast<int64_t>(size.size());
  auto fail = [&] {
    throw RuntimeError(str("sum_to_size: size ", shape_str(size), " is not expandable to size ",
                           shape_str(x.shape()),
                           "; hint: each size must be 1 or match the tensor's trailing dims"));
  };
  if (lead < 0) fail();
  Shape axes;
  for (int64_t i = 0; i < lead; ++i) axes.push_back(i);
  for (int64_t i = 0; i < size.size(); ++i) {
    const int64_t s = x.dim(lead + i);
    if (size[i] == 1 && s != 1)
      axes.push_back(lead + i);
    else if (size[i] != s)
      fail();
  }
  const Tensor out = axes.empty() ? x : sum(x, axes, true, std::nullopt);
  return reshape(out, size);
}

std::pair<Tensor, Tensor> histogram(const Tensor& x, std::optional<int64_t> bins,
                                    const Tensor* edges_in,
                                    std::optional<std::pair<double, double>> range,
                                    const Tensor* weight, bool density) {
  TS_CHECK(is_floating(x.dtype()), NotImplementedError,
           "histogram: input tensor and bins tensors should have the same floating-point dtype, "
           "got ",
           dtype_name(x.dtype()), " (input of shape ", shape_str(x.shape()),
           "); hint: convert the input with x.float()");
  autograd::GradModeGuard no_grad(false);
  const Tensor a = reshape(autograd::detach(x), Shape{x.numel()});
  Tensor edges;
  if (edges_in != nullptr) {
    TS_CHECK(edges_in->ndim() == 1 && edges_in->numel() >= 1, RuntimeError,
             "histogram: bins must be a 1-D tensor of at least one edge, got shape ",
             shape_str(edges_in->shape()));
    TS_CHECK(edges_in->dtype() == x.dtype(), RuntimeError,
             "histogram: input tensor and bins tensors should have the same dtype, got ",
             dtype_name(x.dtype()), " and ", dtype_name(edges_in->dtype()));
    TS_CHECK(!range, RuntimeError,
             "histogram: range= applies to an integer number of bins, not to a tensor of edges");
    edges = contiguous(autograd::detach(*edges_in));
  } else {
    TS_CHECK(*bins > 0, RuntimeError, "histogram: bins must be > 0, got ", *bins);
    double lo = 0, hi = 1;  // an empty input without range= spans [0, 1] (torch, NumPy)
    if (range) {
      std::tie(lo, hi) = *range;
    } else if (a.numel() != 0) {
      lo = item(amin(a, std::nullopt, false)).to<double>();
      hi = item(amax(a, std::nullopt, false)).to<double>();
    }
    TS_CHECK(lo <= hi, RuntimeError, "histogram: max must be larger than min, got range (", lo,
             ", ", hi, ")");
    TS_CHECK(std::isfinite(lo) && std::isfinite(hi), RuntimeError, "histogram: range of [", lo,
             ", ", hi, "] is not finite; hint: pass range= or remove the NaN/inf values");
    if (lo == hi) {
      lo -= 0.5;
      hi += 0.5;
    }
    edges = torch_linspace(lo, hi, *bins + 1, x.dtype(), x.device());
  }
  const int64_t nbins = edges.numel() - 1;
  const Tensor first = slice(edges, 0, 0, 1, 1), last = slice(edges, 0, nbins, nbins + 1, 1);
  const Tensor inside = binary_op(logical_and_def, binary_op(greater_equal_def, a, first),
                                  binary_op(less_equal_def, a, last));
  Tensor bin = subtract(bucketize(a, edges, false, true), wrap_scalar(Scalar::from_int(1)));
  bin = clip(bin, wrap_scalar(Scalar::from_int(0)),
             wrap_scalar(Scalar::from_int(std::max<int64_t>(nbins - 1, 0))));
  Tensor w = weight ? astype(reshape(autograd::detach(*weight), Shape{x.numel()}), x.dtype(), false)
                    : astype(inside, x.dtype(), false);
  if (weight) w = where(inside, w, num(0));
  Tensor hist = Tensor::empty(Shape{nbins}, x.dtype(), x.device());
  fill_(hist, Scalar::from_int(0));
  if (nbins > 0) hist = index_add(hist, 0, bin, w);
  if (density) {
    const Tensor widths = diff(edges, 0, 1, nullptr, nullptr);
    hist = divide(hist, multiply(sum(hist, std::nullopt, false, std::nullopt), widths));
  }
  return {hist, edges};
}

Tensor combinations(const Tensor& x, int64_t r, bool with_replacement) {
  TS_CHECK(x.ndim() == 1, RuntimeError, "combinations: expect a 1D vector, but got shape ",
           shape_str(x.shape()));
  TS_CHECK(r >= 0, RuntimeError, "combinations: expect a non-negative number, but got ", r);
  if (r == 0) return Tensor::empty(Shape{0}, x.dtype(), x.device());
  const int64_t n = x.dim(0);
  // count = C(n, r) or C(n + r - 1, r), checked for int64 overflow
  const int64_t top = with_replacement ? n + r - 1 : n;
  int64_t count = top >= r ? 1 : 0;
  for (int64_t i = 1; i <= r && count != 0; ++i) {
    const int64_t num_i = top - r + i;
    const int64_t g = std::gcd(count, i);
    const int64_t c = count / g, k = num_i / (i / g);
    TS_CHECK(c <= std::numeric_limits<int64_t>::max() / k, RuntimeError,
             "combinations: the number of combinations of ", n, " elements taken ", r,
             " at a time overflows int64; hint: use a smaller r");
    count = c * k;
  }
  TS_CHECK(count <= std::numeric_limits<int64_t>::max() / r, RuntimeError,
           "combinations: the output of ", count, " x ", r, " elements overflows int64");
  if (count == 0) return Tensor::empty(Shape{0, r}, x.dtype(), x.device());
  // the index rows and the result, probed before any row is built (std::bad_alloc when they
  // cannot be allocated)
  nn::check_output_size("combinations", Shape{count, r}, DType::Int64, x.device());
  nn::check_output_size("combinations", Shape{count, r}, x.dtype(), x.device());
  Tensor rows = Tensor::empty(Shape{count * r}, DType::Int64);
  int64_t* out = rows.data<int64_t>();
  std::vector<int64_t> c(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) c[i] = with_replacement ? 0 : i;
  for (int64_t row = 0; row < count; ++row) {
    std::copy(c.begin(), c.end(), out + row * r);
    // the next combination: the rightmost entry that can grow, and the ones after it reset
    int64_t i = r - 1;
    while (i >= 0 && c[i] == (with_replacement ? n - 1 : n - r + i)) --i;
    if (i < 0) break;
    ++c[i];
    for (int64_t j = i + 1; j < r; ++j) c[j] = with_replacement ? c[i] : c[j - 1] + 1;
  }
  if (!x.device().is_cpu()) rows = to_device(rows, x.device());
  return reshape(index_select(x, 0, rows), Shape{count, r});
}

namespace {

// x along d from a to b.
Tensor part(const Tensor& x, int64_t d, int64_t a, int64_t b) { return slice(x, d, a, b, 1); }

Tensor gradient_1d(const Tensor& x, int64_t d, const GradientSpacing& sp, int64_t edge_order) {
  const int64_t n = x.dim(d);
  Tensor first, mid, last;
  if (sp.coords) {
    TS_CHECK(sp.coords->ndim() == 1 && sp.coords->dim(0) == n, RuntimeError,
             "gradient: expected each tensor of spacing to be 1-D of the size of its dim (", n,
             "), got shape ", shape_str(sp.coords->shape()));
    Shape shape(static_cast<size_t>(x.ndim()), 1);
    shape[d] = n - 1;
    const Tensor dxs =
        reshape(diff(astype_op(*sp.coords, x.dtype(), false), 0, 1, nullptr, nullptr), shape);
    const Tensor h1 = part(dxs, d, 0, n - 2), h2 = part(dxs, d, 1, n - 1);
    const Tensor s = add(h1, h2);
    const Tensor a = divide(negative(h2), multiply(h1, s));
    const Tensor b = divide(subtract(h2, h1), multiply(h1, h2));
    const Tensor c = divide(h1, multiply(h2, s));
    mid = add(add(multiply(a, part(x, d, 0, n - 2)), multiply(b, part(x, d, 1, n - 1))),
              multiply(c, part(x, d, 2, n)));
    if (edge_order == 1) {
      first = divide(subtract(part(x, d, 1, 2), part(x, d, 0, 1)), part(dxs, d, 0, 1));
      last = divide(subtract(part(x, d, n - 1, n), part(x, d, n - 2, n - 1)),
                    part(dxs, d, n - 2, n - 1));
    } else {
      Tensor g1 = part(dxs, d, 0, 1), g2 = part(dxs, d, 1, 2);
      Tensor g = add(g1, g2);
      first = subtract(
          add(multiply(divide(negative(add(add(g1, g1), g2)), multiply(g1, g)), part(x, d, 0, 1)),
              multiply(divide(g, multiply(g1, g2)), part(x, d, 1, 2))),
          multiply(divide(g1, multiply(g2, g)), part(x, d, 2, 3)));
      g1 = part(dxs, d, n - 3, n - 2);
      g2 = part(dxs, d, n - 2, n - 1);
      g = add(g1, g2);
      last = add(subtract(multiply(divide(g2, multiply(g1, g)), part(x, d, n - 3, n - 2)),
                          multiply(divide(g, multiply(g1, g2)), part(x, d, n - 2, n - 1))),
                 multiply(divide(add(add(g2, g2), g1), multiply(g2, g)), part(x, d, n - 1, n)));
    }
  } else {
    const double h = sp.h;
    mid = divide(subtract(part(x, d, 2, n), part(x, d, 0, n - 2)), num(2 * h));
    if (edge_order == 1) {
      first = divide(subtract(part(x, d, 1, 2), part(x, d, 0, 1)), num(h));
      last = divide(subtract(part(x, d, n - 1, n), part(x, d, n - 2, n - 1)), num(h));
    } else {
      first = divide(add(subtract(multiply(num(-1.5), part(x, d, 0, 1)),
                                  multiply(num(-2.0), part(x, d, 1, 2))),
                         multiply(num(-0.5), part(x, d, 2, 3))),
                     num(h));
      last = divide(add(subtract(multiply(num(0.5), part(x, d, n - 3, n - 2)),
                                 multiply(num(2.0), part(x, d, n - 2, n - 1))),
                        multiply(num(1.5), part(x, d, n - 1, n))),
                    num(h));
    }
  }
  return concat({first, mid, last}, d);
}

}  // namespace

std::vector<Tensor> gradient(const Tensor& input, const std::vector<GradientSpacing>& spacing,
                             const Shape& dims, int64_t edge_order) {
  TS_CHECK(edge_order == 1 || edge_order == 2, RuntimeError,
           "torch.gradient only supports edge_order=1 and edge_order=2.");
  TS_CHECK(static_cast<int64_t>(spacing.size()) == dims.size(), RuntimeError,
           "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
           "arguments to have the same length, but got a spacing argument of length ",
           spacing.size(), " and a dim argument of length ", dims.size(), ".");
  const Tensor x =
      is_inexact(input.dtype()) ? input : astype_op(input, default_float_dtype(), false);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < dims.size(); ++i) {
    const int64_t d = normalize_axis(dims[i], x.ndim(), "gradient");
    TS_CHECK(x.dim(d) >= edge_order + 1, RuntimeError,
             "torch.gradient expected each dimension size to be at least edge_order+1 (dim ", d,
             " of shape ", shape_str(x.shape()), ", edge_order=", edge_order, ")");
    out.push_back(gradient_1d(x, d, spacing[i], edge_order));
  }
  return out;
}

}  // namespace ts
