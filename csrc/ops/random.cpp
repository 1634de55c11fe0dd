#include "ops/random.h"

#include <cmath>
#include <cstring>

#include "core/device_backend.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(RandomFillKernel, random_fill_stub, "random");
TS_DEFINE_STUB(RandintKernel, randint_stub, "randint");
TS_DEFINE_STUB(RandpermKernel, randperm_stub, "randperm");
TS_DEFINE_STUB(MultinomialKernel, multinomial_stub, "multinomial");
TS_DEFINE_STUB(DropoutKernel, dropout_stub, "dropout");
TS_DEFINE_STUB(DropoutBackwardKernel, dropout_backward_stub, "dropout_backward");

Generator& default_generator() {
  static Generator g(0);
  return g;
}

namespace {
// Fills x through a contiguous buffer when x is a view, so element i is the same number for
// every layout of x.
void fill_random(const Tensor& x, RandomDist dist, double a, double b, Generator& g,
                 const char* op) {
  TS_CHECK(is_floating(x.dtype()), TypeError, op, ": expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  // The kernel writes a contiguous x directly (not through copy_, which checks this).
  TS_CHECK(!x.storage()->readonly, ValueError, op,
           "_: the destination tensor is read-only (it shares memory with a read-only buffer)");
  const auto [seed, offset] = g.next_philox(x.device());
  if (x.numel() == 0) return;
  Tensor buf = x.is_contiguous() ? x : Tensor::empty(x.shape(), x.dtype(), x.device());
  random_fill_stub.get(x.device())(buf, dist, a, b, seed, offset);
  if (!x.is_contiguous()) copy_(x, buf);
  x.bump_version();
}
}  // namespace

void uniform_(const Tensor& x, double low, double high, Generator& g) {
  TS_CHECK(std::isfinite(low) && std::isfinite(high) && low <= high, ValueError,
           "uniform: expected finite low <= high, got low=", low, ", high=", high);
  fill_random(x, RandomDist::Uniform, low, high, g, "uniform");
}

void normal_(const Tensor& x, double mean, double std, Generator& g) {
  TS_CHECK(std >= 0 && std::isfinite(std), ValueError, "normal: std must be finite and >= 0, got ",
           std);
  fill_random(x, RandomDist::Normal, mean, std, g, "normal");
}

void standard_fill_(const Tensor& x, bool normal, Generator& g) {
  const bool complex = is_complex(x.dtype());
  const Tensor t = complex ? view_as_real(x) : x;  // the (..., 2) real parts, in place
  if (normal)
    normal_(t, 0.0, complex ? std::sqrt(0.5) : 1.0, g);
  else
    uniform_(t, 0.0, 1.0, g);
  if (complex) x.bump_version();
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device,
               Generator& g) {
  TS_CHECK(low < high, ValueError, "randint: expected low < high, got low=", low, ", high=", high);
  TS_CHECK(is_integral(dtype) || is_floating(dtype), TypeError,
           "randint: expected an integer or floating dtype, got ", dtype_name(dtype));
  check_draw_bounds(low, high, dtype, "randint");
  Tensor out = Tensor::empty(shape, dtype, device);
  const auto [seed, offset] = g.next_philox(device);
  if (out.numel() > 0)
    randint_stub.get(device)(out, low, static_cast<uint64_t>(high) - static_cast<uint64_t>(low),
                             seed, offset);
  return out;
}

Tensor randperm(int64_t n, DType dtype, Device device, Generator& g) {
  TS_CHECK(n >= 0, ValueError, "randperm: n must be non-negative, got ", n);
  TS_CHECK(is_integral(dtype) || is_floating(dtype), TypeError,
           "randperm: expected an integer or floating dtype, got ", dtype_name(dtype));
  // The largest value, n - 1, must be exact in dtype (as PyTorch checks): randperm(300,
  // dtype=int8) and randperm(5000, dtype=float16) gave wrapped or rounded, repeated values.
  if (n > 1 && is_floating(dtype)) {
    const int digits = dtype == DType::Float16 ? 11 : dtype == DType::BFloat16 ? 8
                       : dtype == DType::Float32 ? 24 : 53;
    TS_CHECK(n - 1 <= (int64_t{1} << digits), ValueError, "randperm: n=", n,
             " is too large for dtype ", dtype_name(dtype), ": n - 1 = ", n - 1,
             " is not exact in it; hint: use an integer dtype (int64)");
  } else if (n > 1) {
    check_scalar_fits(Scalar::from_int(n - 1), dtype, "randperm");
  }
  // Backends without a shuffle kernel get the host's permutation (the same one for a seed).
  if (!randperm_stub.table[static_cast<int>(device.type)])
    return to_device(randperm(n, dtype, Device(), g), device);
  Tensor out = Tensor::empty(Shape{n}, DType::Int64, device);
  const uint64_t offset = g.next_offset();
  if (n > 0) randperm_stub.get(device)(out, g.seed(), offset);
  return dtype == DType::Int64 ? out : astype(out, dtype, false);
}

double dropout_scale(double p) { return p < 1 ? 1.0 / (1.0 - p) : 0.0; }

std::pair<Tensor, Tensor> dropout(const Tensor& x, double p, Generator& g, bool inplace) {
  TS_CHECK(is_floating(x.dtype()), TypeError, "dropout: expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  TS_CHECK(p >= 0 && p <= 1, ValueError, "dropout: probability has to be between 0 and 1, but got ",
           p);
  TS_CHECK(!inplace || !x.storage()->readonly, ValueError,
           "dropout: the tensor is read-only (it shares memory with a read-only buffer); use "
           "inplace=False");
  const auto [seed, offset] = g.next_philox(x.device());
  Tensor mask = Tensor::empty(x.shape(), DType::Bool, x.device());
  // Element i of the mask is x's C-order element i for every layout of x.
  const Tensor xc = contiguous(x);
  const bool direct = inplace && x.is_contiguous();
  Tensor y = direct ? x : Tensor::empty(x.shape(), x.dtype(), x.device());
  if (x.numel() > 0) {
    const uint64_t threshold = static_cast<uint64_t>(std::llround(std::ldexp(p, 32)));
    dropout_stub.get(x.device())(xc, y, mask, threshold, dropout_scale(p), seed, offset);
  }
  if (inplace) {
    if (!direct) copy_(x, y);
    x.bump_version();
    y = x;
  }
  return {y, mask};
}

Tensor dropout_backward(const Tensor& g, const Tensor& mask, double scale) {
  TS_CHECK(mask.dtype() == DType::Bool && mask.shape() == g.shape() && mask.is_contiguous() &&
               mask.device() == g.device() && is_floating(g.dtype()),
           ValueError,
           "dropout_backward: expected a floating gradient and a contiguous bool mask "
           "of its shape on its device, got ",
           dtype_name(g.dtype()), " ", shape_str(g.shape()), " and ", dtype_name(mask.dtype()), " ",
           shape_str(mask.shape()));
  const Tensor gc = contiguous(g);
  Tensor out = Tensor::empty(g.shape(), g.dtype(), g.device());
  if (g.numel() > 0) dropout_backward_stub.get(g.device())(gc, mask, out, scale);
  return out;
}

Tensor take_rows(const Tensor& x, const Tensor& idx) {
  // On a device the rows are gathered by index_select (device-side offsets); the permutation
  // moves to x's device first (randperm draws on the host generator's stream).
  if (!x.device().is_cpu())
    return index_select(x, 0, idx.device() == x.device() ? idx : to_device(idx, x.device()));
  require_host("take_rows", {&x, &idx});
  Shape shape = x.shape();
  shape[0] = idx.numel();
  Tensor out = Tensor::empty(shape, x.dtype(), x.device());
  const Tensor src = contiguous(x);
  const int64_t* ip = contiguous(idx).data<int64_t>();
  const int64_t row = x.dim(0) > 0 ? x.nbytes() / x.dim(0) : 0;
  for (int64_t i = 0; i < idx.numel(); ++i)
    std::memcpy(out.data_ptr() + i * row, src.data_ptr() + ip[i] * row, row);
  return out;
}

void shuffle_(const Tensor& x, Generator& g) {
  TS_CHECK(x.ndim() >= 1, ValueError, "shuffle: expected at least 1 dimension, got a 0-d tensor");
  const Tensor perm = randperm(x.dim(0), DType::Int64, x.device(), g);
  copy_(x, take_rows(x, perm));
  x.bump_version();
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& g) {
  // Device probabilities are validated and drawn on the host, so a seed gives the CPU's draws
  // on every device; the cost is one copy each way (sampling loops read the result anyway).
  if (!probs.device().is_cpu())
    return to_device(multinomial(to_device(probs, Device()), num_samples, replacement, g),
                     probs.device());
  TS_CHECK(probs.ndim() == 1 || probs.ndim() == 2, ValueError,
           "multinomial: probs must be 1-D or 2-D, got shape ", shape_str(probs.shape()));
  TS_CHECK(is_floating(probs.dtype()), TypeError,
           "multinomial: expected floating-point probabilities, got ", dtype_name(probs.dtype()));
  TS_CHECK(num_samples > 0, ValueError, "multinomial: num_samples must be positive, got ",
           num_samples);
  const int64_t n = probs.dim(probs.ndim() - 1);
  TS_CHECK(n > 0, ValueError, "multinomial: probs has no categories");
  Tensor p =
      contiguous(astype(probs.ndim() == 1 ? expand_dims(probs, 0) : probs, DType::Float64, false));
  const double* pp = p.data<double>();
  for (int64_t r = 0; r < p.dim(0); ++r) {
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = pp[r * n + i];
      TS_CHECK(std::isfinite(v) && v >= 0, ValueError,
               "multinomial: probabilities must be finite and non-negative, got ", v);
      total += v;
    }
    TS_CHECK(total > 0, ValueError, "multinomial: the probabilities of row ", r, " sum to zero");
  }
  // Without replacement the zero-probability categories come last, in index order, once the
  // others are drawn (PyTorch's rule), so only the category count bounds num_samples.
  TS_CHECK(replacement || num_samples <= n, ValueError, "multinomial: cannot sample ", num_samples,
           " > ", n, " (the number of categories) samples without replacement");
  Tensor out = Tensor::empty(Shape{p.dim(0), num_samples}, DType::Int64, probs.device());
  const uint64_t offset = g.next_offset();
  multinomial_stub.get(probs.device())(p, out, replacement, g.seed(), offset);
  return probs.ndim() == 1 ? reshape(out, Shape{num_samples}) : out;
}

}  // namespace ts
