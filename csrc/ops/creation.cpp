#include "ops/creation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "autograd/record.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(ArangeKernel, arange_stub, "arange");
TS_DEFINE_STUB(LinspaceKernel, linspace_stub, "linspace");
TS_DEFINE_STUB(TriZeroKernel, tri_zero_stub, "tril/triu");

namespace {
bool is_real_number(const Scalar& s) { return s.kind != ScalarKind::Complex; }
double as_double(const Scalar& s) {
  return s.is_u64 ? double(s.u) : s.kind == ScalarKind::Float ? s.d : double(s.i);
}

// ceil(a / b) for b != 0 without overflow in the intermediate sum.
__int128 ceil_div(__int128 a, __int128 b) {
  const __int128 q = a / b, r = a % b;
  return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
}

int64_t arange_length(const Scalar& start, const Scalar& stop, const Scalar& step) {
  const bool ints = start.kind != ScalarKind::Float && stop.kind != ScalarKind::Float &&
                    step.kind != ScalarKind::Float && !start.is_u64 && !stop.is_u64 && !step.is_u64;
  if (ints) {
    TS_CHECK(step.i != 0, ValueError, "arange: step must not be zero");
    // In 128 bits: stop - start may pass int64 (arange(2**62, -2**63, 5) is empty, and
    // arange(10, -2**63 + 1, -2**63 + 1) has two elements); only the length must fit.
    const __int128 n = ceil_div(static_cast<__int128>(stop.i) - start.i, step.i);
    TS_CHECK(n <= std::numeric_limits<int64_t>::max(), ValueError, "arange: the range [",
             start.i, ", ", stop.i, ") is too large");
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const double a = as_double(start), b = as_double(stop), s = as_double(step);
  TS_CHECK(s != 0, ValueError, "arange: step must not be zero");
  TS_CHECK(std::isfinite(a) && std::isfinite(b) && std::isfinite(s), ValueError,
           "arange: start, stop and step must be finite, got ", a, ", ", b, ", ", s);
  const double len = std::ceil((b - a) / s);
  TS_CHECK(len < 9.0e18, ValueError, "arange: the range has too many elements (", len, ")");
  return len > 0 ? static_cast<int64_t>(len) : 0;
}
// A real number truncated toward zero to int64, as Python's int() of a float.
int64_t trunc_int(const Scalar& s, const char* op) {
  if (s.kind != ScalarKind::Float) return s.i;
  TS_CHECK(std::isfinite(s.d) && std::fabs(s.d) < 9.2e18, ValueError, op, ": ", s.d,
           " does not fit an integer dtype");
  return static_cast<int64_t>(std::trunc(s.d));
}

// int64 values v0, v0 + dv, ... (n of them; wrapping like PyTorch's integer arithmetic) cast to
// dtype.
Tensor int_ramp(int64_t v0, int64_t dv, int64_t n, DType dtype) {
  Tensor out = Tensor::empty(Shape{n}, DType::Int64, Device{});
  auto* p = out.data<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(v0) +
                                static_cast<uint64_t>(i) * static_cast<uint64_t>(dv));
  return dtype == DType::Int64 ? out : astype_op(out, dtype, false);
}

// arange with a float argument and an integer dtype, as PyTorch computes it: the values are
// trunc(start) + i * trunc(step). For int64 the length comes from the truncated arguments too
// (a step truncating to 0 raises ValueError); for the other integer dtypes from
// ceil((stop - start) / step) over the float arguments.
Tensor int_arange_of_floats(const Scalar& start, const Scalar& stop, const Scalar& step,
                            DType dtype) {
  TS_CHECK(as_double(step) != 0, ValueError, "arange: step must be nonzero");
  const int64_t xstart = trunc_int(start, "arange"), xstep = trunc_int(step, "arange");
  int64_t n = 0;
  if (dtype == DType::Int64) {
    TS_CHECK(xstep != 0, ValueError, "arange: step must be nonzero");
    n = arange_length(Scalar::from_int(xstart), Scalar::from_int(trunc_int(stop, "arange")),
                      Scalar::from_int(xstep));
  } else {
    n = arange_length(Scalar::from_double(as_double(start)), Scalar::from_double(as_double(stop)),
                      Scalar::from_double(as_double(step)));
  }
  return int_ramp(xstart, xstep, n, dtype);
}

// linspace with an integer dtype, as PyTorch computes it: start and stop are truncated to
// integers, the step (stop - start) / (num - 1) is a double, the first half of the values is
// start + i * step and the second half stop - (num - 1 - i) * step, each truncated toward zero.
Tensor int_linspace(double start, double stop, int64_t num, DType dtype, bool endpoint) {
  const double a = std::trunc(start), b = std::trunc(stop);
  Tensor out = Tensor::empty(Shape{num}, DType::Int64, Device{});
  auto* p = out.data<int64_t>();
  if (num == 1) {
    p[0] = static_cast<int64_t>(a);
  } else if (endpoint) {
    const double step = (b - a) / double(num - 1);
    const int64_t half = num / 2;
    for (int64_t i = 0; i < num; ++i)
      p[i] = static_cast<int64_t>(
          std::trunc(i < half ? a + step * double(i) : b - step * double(num - 1 - i)));
  } else {
    const double step = num ? (b - a) / double(num) : 0.0;
    for (int64_t i = 0; i < num; ++i) p[i] = static_cast<int64_t>(std::trunc(a + step * double(i)));
  }
  return dtype == DType::Int64 ? out : astype_op(out, dtype, false);
}
}  // namespace

Tensor arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
              Device device) {
  // Computed on the host and copied: these are small and built once.
  if (!device.is_cpu()) return to_device(arange(start, stop, step, dtype, Device{}), device);
  TS_CHECK(is_real_number(start) && is_real_number(stop) && is_real_number(step), TypeError,
           "arange: start, stop and step must be real numbers");
  if (is_integral(dtype) && (start.kind == ScalarKind::Float || stop.kind == ScalarKind::Float ||
                             step.kind == ScalarKind::Float))
    return int_arange_of_floats(start, stop, step, dtype);
  TS_CHECK(in_set(dtype, kRealSet), TypeError, "arange: dtype ", dtype_name(dtype),
           " is not supported; use an integer or real floating-point dtype");
  Tensor out = Tensor::empty(Shape{arange_length(start, stop, step)}, dtype, device);
  if (out.numel() > 0) arange_stub.get(device)(out, start, step);
  return out;
}

Tensor linspace(std::complex<double> start, std::complex<double> stop, int64_t num, DType dtype,
                bool endpoint, Device device) {
  // Computed on the host and copied: these are small and built once.
  if (!device.is_cpu())
    return to_device(linspace(start, stop, num, dtype, endpoint, Device{}), device);
  TS_CHECK(num >= 0, ValueError, "linspace: number of steps must be non-negative, got ", num);
  if (is_integral(dtype)) {
    TS_CHECK(start.imag() == 0 && stop.imag() == 0, TypeError,
             "linspace: complex endpoints need a complex dtype, got ", dtype_name(dtype));
    // endpoints an integer dtype cannot hold raise, as torch (they wrapped: 1000 in int8)
    // (an integral endpoint counts as an int: -1 wraps into uint8 as torch's does)
    for (const double end : {start.real(), stop.real()})
      check_scalar_fits(std::floor(end) == end && std::fabs(end) < 9.2e18
                            ? Scalar::from_int(static_cast<int64_t>(end))
                            : Scalar::from_double(end),
                        dtype, "linspace");
    return int_linspace(start.real(), stop.real(), num, dtype, endpoint);
  }
  TS_CHECK(is_inexact(dtype), TypeError, "linspace: dtype ", dtype_name(dtype),
           " is not supported; use a real floating-point, complex or integer dtype");
  TS_CHECK(is_complex(dtype) || (start.imag() == 0 && stop.imag() == 0), TypeError,
           "linspace: complex start/stop need a complex dtype, got ", dtype_name(dtype));
  Tensor out = Tensor::empty(Shape{num}, dtype, device);
  if (num == 0) return out;
  // NumPy's formula: step = (stop - start) / div, y[i] = start + i * step, y[-1] = stop.
  const int64_t div = endpoint ? num - 1 : num;
  const std::complex<double> step = div > 0 ? (stop - start) / double(div) : 0.0;
  linspace_stub.get(device)(out, start, step, stop, endpoint && num > 1);
  return out;
}

Tensor logspace(double start, double stop, int64_t num, double base, DType dtype, Device device) {
  TS_CHECK(num >= 0, RuntimeError, "logspace: number of steps must be non-negative, got ", num);
  // base ** linspace(start, stop) in double precision (NumPy's values), then cast.
  Tensor exps = linspace(start, stop, num, DType::Float64, true, Device{});
  Tensor out = Tensor::empty(Shape{num}, DType::Float64, Device{});
  const double* e = exps.data<double>();
  double* p = out.data<double>();
  for (int64_t i = 0; i < num; ++i) p[i] = std::pow(base, e[i]);
  if (dtype != DType::Float64) out = astype_op(out, dtype, false);
  return device.is_cpu() ? out : to_device(out, device);
}

Tensor tri_indices(int64_t row, int64_t col, int64_t offset, bool upper, DType dtype,
                   Device device) {
  const char* op = upper ? "triu_indices" : "tril_indices";
  TS_CHECK(row >= 0, RuntimeError, op, ": row must be non-negative, got ", row);
  TS_CHECK(col >= 0, RuntimeError, op, ": col must be non-negative, got ", col);
  // Rows lo..hi hold entries; row i holds clip(a + i, 0, col) (lower) or clip(a - i, 0, col)
  // (upper) of them. The count is summed in closed form (in 128 bits) and checked before
  // anything is built, and only rows with entries are enumerated: the work is O(output).
  using I = __int128;
  const I a = upper ? I(col) - offset : I(offset) + 1;
  const I lo = upper ? 0 : std::max<I>(0, 1 - a);
  const I hi = upper ? std::min<I>(I(row) - 1, a - 1) : I(row) - 1;
  const auto count = [&](I i) { return std::clamp<I>(upper ? a - i : a + i, 0, col); };
  I total = 0;
  if (hi >= lo && col > 0) {
    // rows where the count is clipped at col, then an arithmetic series for the rest
    const I full_lo = upper ? lo : std::max<I>(lo, I(col) - a);
    const I full_hi = upper ? std::min<I>(hi, a - col) : hi;
    const I lin_lo = upper ? std::max<I>(lo, a - col + 1) : lo;
    const I lin_hi = upper ? hi : std::min<I>(hi, I(col) - a - 1);
    const I nfull = std::max<I>(0, full_hi - full_lo + 1);
    const I nlin = std::max<I>(0, lin_hi - lin_lo + 1);
    total = nfull * col;
    if (nlin > 0) total += (nlin * (2 * a + (upper ? -1 : 1) * (lin_lo + lin_hi))) / 2;
  }
  TS_CHECK(total * 2 * itemsize(dtype) < (I(1) << 63), RuntimeError, op,
           ": the output of shape (2, ", static_cast<double>(total),
           ") is too large; its storage size calculation overflowed");
  const int64_t n = static_cast<int64_t>(total);
  Tensor out = Tensor::empty(Shape{2, n}, DType::Int64, Device{});
  int64_t* r = out.data<int64_t>();
  int64_t* c = r + n;
  int64_t k = 0;
  for (I i = lo; n > 0 && i <= hi; ++i) {
    const int64_t m = static_cast<int64_t>(count(i));
    const int64_t start = upper ? col - m : 0;
    for (int64_t j = 0; j < m; ++j, ++k) {
      r[k] = static_cast<int64_t>(i);
      c[k] = start + j;
    }
  }
  if (dtype != DType::Int64) out = astype_op(out, dtype, false);
  return device.is_cpu() ? out : to_device(out, device);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, bool xy) {
  const size_t n = xs.size();
  std::vector<size_t> pos(n);
  for (size_t i = 0; i < n; ++i) pos[i] = i;
  if (xy && n >= 2) std::swap(pos[0], pos[1]);
  Shape shape(static_cast<int64_t>(n), 1);
  for (size_t i = 0; i < n; ++i) {
    TS_CHECK(xs[i].ndim() <= 1, ValueError, "meshgrid: argument ", i,
             " must be 0-D or 1-D, got shape ", shape_str(xs[i].shape()));
    shape[pos[i]] = xs[i].numel();  // a 0-d tensor counts as 1-D of one element (torch)
  }
  std::vector<Tensor> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Shape view(static_cast<int64_t>(n), 1);
    view[pos[i]] = xs[i].numel();
    out.push_back(broadcast_to(reshape(xs[i], view), shape));
  }
  return out;
}

Tensor eye(int64_t n_rows, int64_t n_cols, int64_t k, DType dtype, Device device) {
  // Computed on the host and copied: these are small and built once.
  if (!device.is_cpu()) return to_device(eye(n_rows, n_cols, k, dtype, Device{}), device);
  TS_CHECK(n_rows >= 0 && n_cols >= 0, ValueError,
           "eye: n_rows and n_cols must be non-negative, got ", n_rows, " and ", n_cols);
  Tensor out = Tensor::empty(Shape{n_rows, n_cols}, dtype, device);
  fill_(out, Scalar::from_int(0));
  // The k-th diagonal is a strided view: one fill writes all the ones.
  fill_(diagonal(out, k, 0, 1), Scalar::from_int(1));
  return out;
}

namespace {
Tensor tri(const Tensor& x, int64_t k, bool upper, const char* op) {
  TS_CHECK(x.ndim() >= 2, ValueError, op,
           ": expected a tensor with at least 2 dimensions, got shape ", shape_str(x.shape()));
  Tensor out = clone(x);
  if (out.numel() > 0) tri_zero_stub.get(x.device())(out, k, upper);
  return out;
}
}  // namespace

Tensor tril(const Tensor& x, int64_t k, const char* op) {
  Tensor out = tri(x, k, false, op);
  if (autograd::needs_grad({&x})) autograd::record_tri(x, out, k, false);
  return out;
}
Tensor triu(const Tensor& x, int64_t k, const char* op) {
  Tensor out = tri(x, k, true, op);
  if (autograd::needs_grad({&x})) autograd::record_tri(x, out, k, true);
  return out;
}

}  // namespace ts
