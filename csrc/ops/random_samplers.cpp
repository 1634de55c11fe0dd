#include "ops/random_samplers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/record_random.h"
#include "core/parallel.h"
#include "kernels/special_math.h"
#include "core/scalar_range.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/math.h"
#include "ops/views.h"

namespace ts {

namespace {

Tensor number(double v) { return wrap_scalar(Scalar::from_double(v)); }

// t's values as a contiguous float64 host tensor (t itself when it already is one).
Tensor host_doubles(const Tensor& t) {
  return contiguous(
      astype(t.device().is_cpu() ? t : to_device(t, Device()), DType::Float64, false));
}

// Whether every value of t lies in [lo, hi] (NaN does not).
bool all_within(const Tensor& t, double lo, double hi) {
  const Tensor h = host_doubles(t);
  const double* p = h.data<double>();
  for (int64_t i = 0; i < h.numel(); ++i)
    if (!(p[i] >= lo && p[i] <= hi)) return false;
  return true;
}

// `values` written into x (cast to x's dtype, moved to its device); x's version moves on.
void write_fill(const Tensor& x, const Tensor& values) {
  Tensor v = astype(values, x.dtype(), false);
  if (v.device() != x.device()) v = to_device(v, x.device());
  copy_(x, v);
  x.bump_version();
}

// U[0, 1) or N(0, 1) numbers of `shape` in float64 on the host: the draws of
// ts.rand/randn(shape, dtype=float64), which the in-place fills transform.
Tensor host_draws(const Shape& shape, bool normal, Generator& g) {
  Tensor u = Tensor::empty(shape, DType::Float64, Device());
  standard_fill_(u, normal, g);
  return u;
}

template <class F>
Tensor map_doubles(Tensor t, F f) {
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = f(p[i]);
  return t;
}

void check_floating(const Tensor& x, const char* op, const char* what) {
  TS_CHECK(is_floating(x.dtype()), TypeError, op, ": expected a floating-point ", what, ", got ",
           dtype_name(x.dtype()), "; hint: cast it with .to(ts.float32)");
}

// Uniform doubles for element i of a sampler that may reject: words of Philox blocks
// (i << 24) + j for j = 0, 1, ... at the call's offset (Note [Counter-based RNG]).
struct ElementStream {
  uint64_t seed, offset, block;
  rng::Philox4x32 w{};
  int used = 4;
  ElementStream(uint64_t s, uint64_t o, int64_t i)
      : seed(s), offset(o), block(static_cast<uint64_t>(i) << 24) {}
  double next() {
    if (used == 4) {
      w = philox4x32_10(block++, offset, seed);
      used = 0;
    }
    const double u = rng::unit53(w[used], w[used + 1]);
    used += 2;
    return u;
  }
};

// Poisson(lam): Knuth's product of uniforms below 10, Hormann's PTRS above (NumPy's choice).
double sample_poisson(double lam, ElementStream& s) {
  if (lam == 0) return 0;
  if (lam < 10) {
    const double limit = std::exp(-lam);
    double k = 0, prod = s.next();
    while (prod > limit) {
      k += 1;
      prod *= s.next();
    }
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = s.next() - 0.5, v = s.next(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lam + k * loglam - std::lgamma(k + 1))
      return k;
  }
}

// Binomial(n, p) for p <= 0.5: inversion by geometric jumps when n p < 10, else Hormann's BTRS
// (PyTorch's choice).
double sample_binomial_low(double n, double p, ElementStream& s) {
  if (n * p < 10) {
    const double logq = std::log1p(-p);
    double sum = 0, k = 0;
    for (;;) {
      sum += std::ceil(std::log(1 - s.next()) / logq);
      if (sum > n) return k;
      k += 1;
    }
  }
  const double q = 1 - p, spq = std::sqrt(n * p * q);
  const double b = 1.15 + 2.53 * spq, a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5;
  const double vr = 0.92 - 4.2 / b, alpha = (2.83 + 5.1 / b) * spq, lpq = std::log(p / q);
  const double m = std::floor((n + 1) * p);
  const double h = std::lgamma(m + 1) + std::lgamma(n - m + 1);
  for (;;) {
    const double u = s.next() - 0.5, v = s.next(), us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (k < 0 || k > n) continue;
    if (us >= 0.07 && v <= vr) return k;
    const double lv = std::log(v * alpha / (a / (us * us) + b));
    if (lv <= h - std::lgamma(k + 1) - std::lgamma(n - k + 1) + (k - m) * lpq) return k;
  }
}

double sample_binomial(double n, double p, ElementStream& s) {
  if (n == 0 || p == 0) return 0;
  if (p == 1) return n;
  return p > 0.5 ? n - sample_binomial_low(n, 1 - p, s) : sample_binomial_low(n, p, s);
}

// Gamma(a, 1) for a > 0: Marsaglia and Tsang's squeeze on normals made from the stream's
// uniforms (Box-Muller), a < 1 boosted by U^(1/a) in log space.
double sample_gamma(double a, ElementStream& s) {
  double boost = 0;
  if (a < 1) {
    boost = std::log(1 - s.next()) / a;
    a += 1;
  }
  const double d = a - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (;;) {
    const double z =
        std::sqrt(-2 * std::log(1 - s.next())) * std::cos(6.283185307179586 * s.next());
    const double t = 1 + c * z;
    if (t <= 0) continue;
    const double v = t * t * t, u = 1 - s.next();
    if (u < 1 - 0.0331 * z * z * z * z || std::log(u) < 0.5 * z * z + d * (1 - v + std::log(v)))
      return boost == 0 ? d * v : std::exp(std::log(d * v) + boost);
  }
}

// Which algorithm gammainc / gammaincc (kernels/special_math.h) pick for (a, x), as a bit
// set of their tests: a difference quotient across a switch would measure the jump between
// two approximations, not the slope.
int igam_branch(double a, double x) {
  const double r = std::fabs(x - a) / a;
  return static_cast<int>(a > 20 && a < 200 && r < 0.3) |
         static_cast<int>(a > 200 && r < 4.5 / std::sqrt(a)) << 1 | static_cast<int>(x > a) << 2 |
         static_cast<int>(x * 1.1 < a) << 3 |
         static_cast<int>(x <= 0.5 && -0.4 / std::log(x) < a) << 4;
}

// d x / d a at fixed P(a, x) = -(dP/da) / density. Below the mean, from P's power series
// P = x^a e^-x sum_n x^n / Gamma(a + n + 1): dx/da = -x sum_n t_n (log x - digamma(a + n + 1)),
// t_0 = 1 / a, t_n = t_(n-1) x / (a + n); every term has one sign (x < a), so the sum is
// accurate to rounding, even where P underflows. Above the mean (or past 20000 terms), dP/da =
// -Q d(log Q)/da with Q = 1 - P: log Q is nearly linear in a, so Richardson-extrapolated
// central differences of it with steps 1e-3 a are accurate; where those points straddle a
// switch of gammainc's algorithm, a second-order one-sided difference with steps 1e-5 a on one
// side (a itself may sit on the switch, as a = 200 does). Within about 1e-8 of the exact value
// (PyTorch's approximation: about 1e-4).
double gamma_grad_series(double a, double x) {
  const double log_x = std::log(x);
  double t = 1 / a, psi = scalar::digamma(a + 1), sum = 0;
  for (int n = 0; n < 20000; ++n) {
    const double term = t * (log_x - psi);
    sum += term;
    if (std::fabs(term) <= 1e-17 * std::fabs(sum)) return -x * sum;
    const double inv = 1 / (a + n + 1);
    t *= x * inv;
    psi += inv;
  }
  return std::numeric_limits<double>::quiet_NaN();  // not converged: the caller differences
}

double gamma_sample_grad(double a, double x) {
  if (!(x > 0) || !(a > 0) || std::isinf(x)) return 0;
  if (x < a) {
    const double g = gamma_grad_series(a, x);
    if (!std::isnan(g)) return g;
  }
  const bool upper = x > a;
  auto log_cdf = [&](double b) {
    return std::log(upper ? scalar::gammaincc(b, x) : scalar::gammainc(b, x));
  };
  const double log_c = log_cdf(a);
  if (!std::isfinite(log_c)) return 0;
  const double h = 1e-3 * a;
  double slope;
  if (igam_branch(a - h, x) == igam_branch(a + h, x)) {
    auto diff = [&](double d) { return (log_cdf(a + d) - log_cdf(a - d)) / (2 * d); };
    slope = (4 * diff(h / 2) - diff(h)) / 3;
  } else {  // the slope at a of the parabola through a + d, a + 2d, a + 3d (one side's points)
    double d = 1e-5 * a;
    if (igam_branch(a + d, x) != igam_branch(a + 3 * d, x)) d = -d;
    slope = (-2.5 * log_cdf(a + d) + 4 * log_cdf(a + 2 * d) - 1.5 * log_cdf(a + 3 * d)) / d;
  }
  if (slope == 0 || !std::isfinite(slope)) return 0;
  const double log_density = (a - 1) * std::log(x) - x - std::lgamma(a);
  const double r = std::exp(log_c + std::log(std::fabs(slope)) - log_density);
  // dP/da = slope * P below the mean, -slope * Q above; dx/da = -(dP/da) / density
  return (slope > 0) != upper ? -r : r;
}

// Uniform integers in [low, low + range) of `shape` (int64, on `device`): randint's stream, with
// a range up to 2^64 (random_'s full int64 range).
Tensor draw_ints(int64_t low, uint64_t range, const Shape& shape, Device device, Generator& g) {
  Tensor out = Tensor::empty(shape, DType::Int64, device);
  const auto [seed, offset] = g.next_philox(device);
  if (out.numel() > 0) randint_stub.get(device)(out, low, range, seed, offset);
  return out;
}

int mantissa_bits(DType d) {
  switch (d) {
    case DType::Float16:
      return 10;
    case DType::BFloat16:
      return 7;
    case DType::Float32:
      return 23;
    default:
      return 52;
  }
}

// The [min, max] an integer dtype holds (bool: [0, 1]).
std::pair<int64_t, uint64_t> int_range(DType d) {
  switch (d) {
    case DType::Bool:
      return {0, 1};
    case DType::Int8:
      return {-128, 127};
    case DType::UInt8:
      return {0, 255};
    case DType::Int16:
      return {-32768, 32767};
    case DType::UInt16:
      return {0, 65535};
    case DType::Int32:
      return {std::numeric_limits<int32_t>::min(), 2147483647u};
    case DType::UInt32:
      return {0, 4294967295u};
    case DType::UInt64:
      return {0, std::numeric_limits<uint64_t>::max()};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

}  // namespace

Tensor normal(const Tensor& mean, const Tensor& std, const Shape& size, DType dtype, Generator& g) {
  const char* op = "normal";
  TS_CHECK(is_inexact(dtype), TypeError, op, ": expected a floating-point dtype, got ",
           dtype_name(dtype), "; hint: pass floating mean/std or dtype=ts.float32");
  for (const Tensor* t : {&mean, &std})
    TS_CHECK(is_inexact(t->dtype()) || t->is_wrapped_number(), TypeError, op,
             ": expected floating-point mean and std, got ", dtype_name(t->dtype()),
             "; hint: cast it with .to(ts.float32)");
  TS_CHECK(is_complex(std.dtype()) || all_within(std, 0, INFINITY), ValueError, op,
           ": std must be >= 0 (every element), got a negative or NaN std of shape ",
           shape_str(std.shape()));
  const Shape shape = broadcast_shapes(broadcast_shapes(mean.shape(), std.shape(), op), size, op);
  const Device device = mean.is_wrapped_number() ? std.device() : mean.device();
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    Tensor z = Tensor::empty(shape, dtype, device);
    standard_fill_(z, true, g);
    out = astype(add(mean, binary_op(kMultiply, std, z), Scalar::from_int(1), op), dtype, false);
    if (out.shape() != shape) out = contiguous(broadcast_to(out, shape));
  }
  autograd::record_random(autograd::RandomGrad::Normal, {mean, std}, out);
  return out;
}

Tensor bernoulli(const Tensor& p, const Shape& size, DType dtype, Generator& g) {
  const char* op = "bernoulli";
  TS_CHECK(is_floating(p.dtype()), TypeError, op, ": expected floating-point probabilities, got ",
           dtype_name(p.dtype()), "; hint: cast them with .to(ts.float32)");
  TS_CHECK(all_within(p, 0, 1), ValueError, op,
           ": probabilities must be in [0, 1] (every element of p, shape ", shape_str(p.shape()),
           ")");
  const Shape shape = broadcast_shapes(p.shape(), size, op);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    Tensor u = Tensor::empty(shape, p.dtype(), p.device());
    standard_fill_(u, false, g);
    out = astype(binary_op(less_def, u, p), dtype, false);
  }
  autograd::record_random(autograd::RandomGrad::Bernoulli, {p}, out);
  return out;
}

Tensor bernoulli(double p, const Shape& shape, DType draw, DType dtype, Device device,
                 Generator& g) {
  TS_CHECK(p >= 0 && p <= 1, ValueError, "bernoulli: p must be in [0, 1], got ", p);
  Tensor u = Tensor::empty(shape, draw, device);
  standard_fill_(u, false, g);
  autograd::GradModeGuard no_grad(false);
  return astype(binary_op(less_def, u, number(p)), dtype, false);
}

Tensor poisson(const Tensor& rate, Generator& g) {
  const char* op = "poisson";
  check_floating(rate, op, "rate");
  const Tensor r = host_doubles(rate);
  TS_CHECK(all_within(r, 0, std::numeric_limits<double>::max()), ValueError, op,
           ": invalid Poisson rate, expected rate to be finite and non-negative (shape ",
           shape_str(rate.shape()), ")");
  const auto [seed, offset] = g.next_philox(Device());
  Tensor out = Tensor::empty(rate.shape(), DType::Float64, Device());
  const double* rp = r.data<double>();
  double* op_ = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    ElementStream s(seed, offset, i);
    op_[i] = sample_poisson(rp[i], s);
  }
  Tensor res = astype(out, rate.dtype(), false);
  if (!rate.device().is_cpu()) res = to_device(res, rate.device());
  autograd::record_random(autograd::RandomGrad::Poisson, {rate}, res);
  return res;
}

Tensor binomial(const Tensor& count, const Tensor& prob, Generator& g) {
  const char* op = "binomial";
  TS_CHECK(is_floating(count.dtype()), ValueError, op,
           ": only floating-point dtypes are supported for count, got ", dtype_name(count.dtype()),
           "; hint: cast it with .to(ts.float32)");
  check_floating(prob, op, "prob");
  const Shape shape = broadcast_shapes(count.shape(), prob.shape(), op);
  const Tensor n = host_doubles(broadcast_to(count, shape));
  const Tensor p = host_doubles(broadcast_to(prob, shape));
  TS_CHECK(all_within(p, 0, 1) && all_within(n, 0, 9.007199254740992e15), ValueError, op,
           ": expected 0 <= prob <= 1 and finite count >= 0 (shapes ", shape_str(count.shape()),
           " and ", shape_str(prob.shape()), ")");
  const auto [seed, offset] = g.next_philox(Device());
  Tensor out = Tensor::empty(shape, DType::Float64, Device());
  const double *np = n.data<double>(), *pp = p.data<double>();
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    ElementStream s(seed, offset, i);
    o[i] = sample_binomial(std::trunc(np[i]), pp[i], s);
  }
  Tensor res = astype(out, count.dtype(), false);
  if (!count.device().is_cpu()) res = to_device(res, count.device());
  autograd::record_missing("BinomialBackward0", {count, prob}, {res});
  return res;
}

Tensor standard_gamma(const Tensor& alpha, Generator& g) {
  const char* op = "_standard_gamma";
  check_floating(alpha, op, "alpha");
  const Tensor a = host_doubles(alpha);
  TS_CHECK(all_within(a, std::numeric_limits<double>::min(), std::numeric_limits<double>::max()),
           ValueError, op, ": expected a finite, positive concentration alpha (shape ",
           shape_str(alpha.shape()), "); hint: clamp it away from 0");
  const double tiny = alpha.dtype() == DType::Float64 ? std::numeric_limits<double>::min()
                      : alpha.dtype() == DType::Float32
                          ? static_cast<double>(std::numeric_limits<float>::min())
                          : 6.103515625e-05;  // float16's (bfloat16's is float32's, smaller)
  const auto [seed, offset] = g.next_philox(Device());
  Tensor out = Tensor::empty(alpha.shape(), DType::Float64, Device());
  const double* ap = a.data<double>();
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    ElementStream s(seed, offset, i);
    o[i] = std::max(sample_gamma(ap[i], s), tiny);
  }
  Tensor res = astype(out, alpha.dtype(), false);
  if (!alpha.device().is_cpu()) res = to_device(res, alpha.device());
  autograd::record_standard_gamma(alpha, res);
  return res;
}

Tensor standard_gamma_grad(const Tensor& alpha, const Tensor& x) {
  const char* op = "_standard_gamma_grad";
  check_floating(alpha, op, "alpha");
  check_floating(x, op, "x");
  const Shape shape = broadcast_shapes(alpha.shape(), x.shape(), op);
  const Tensor a = host_doubles(broadcast_to(alpha, shape));
  const Tensor xs = host_doubles(broadcast_to(x, shape));
  Tensor out = Tensor::empty(shape, DType::Float64, Device());
  const double *ap = a.data<double>(), *xp = xs.data<double>();
  double* o = out.data<double>();
  parallel_for(0, out.numel(), 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = gamma_sample_grad(ap[i], xp[i]);
  });
  Tensor res = astype(out, result_type(alpha, x), false);
  return alpha.device().is_cpu() ? res : to_device(res, alpha.device());
}

Tensor exponential(double scale, const Shape& shape, DType dtype, Device device, Generator& g) {
  TS_CHECK(scale >= 0, ValueError, "exponential: scale must be non-negative, got ", scale);
  Tensor u = Tensor::empty(shape, dtype, device);
  TS_CHECK(is_inexact(dtype), TypeError, "exponential: expected a floating-point dtype, got ",
           dtype_name(dtype), "; hint: pass dtype=ts.float32 or ts.float64");
  standard_fill_(u, false, g);
  autograd::GradModeGuard no_grad(false);
  return binary_op(kMultiply, unary_op(kNegative, unary_op(log1p_def, unary_op(kNegative, u))),
                   number(scale));
}

void bernoulli_(const Tensor& x, const Tensor& p, Generator& g) {
  autograd::record_random_fill(autograd::RandomGrad::Bernoulli, x, "bernoulli_");
  write_fill(
      x, bernoulli(broadcast_to(p.device() == x.device() ? p : to_device(p, x.device()), x.shape()),
                   Shape{}, p.dtype(), g));
}

void bernoulli_(const Tensor& x, double p, Generator& g) {
  TS_CHECK(p >= 0 && p <= 1, ValueError, "bernoulli_: expects p to be in [0, 1], but got p=", p);
  autograd::record_random_fill(autograd::RandomGrad::Bernoulli, x, "bernoulli_");
  write_fill(x, bernoulli(p, x.shape(), DType::Float32, DType::Float32, x.device(), g));
}

void check_draw_bounds(int64_t low, int64_t high, DType dtype, const char* op) {
  bool from_ok = true, to_ok = true;
  if (is_floating(dtype)) {
    const double m = float_max(dtype);
    from_ok = std::fabs(static_cast<double>(low)) <= m;
    to_ok = std::fabs(static_cast<double>(high - 1)) <= m;
  } else {
    const auto [mn, mx] = int_range(dtype);
    const bool wide = mx > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    from_ok = low >= mn && (wide || low <= static_cast<int64_t>(mx));
    to_ok = high - 1 >= mn && (wide || high - 1 <= static_cast<int64_t>(mx));
  }
  TS_CHECK(from_ok, ValueError, op, ": from=", low, " is out of bounds for ", dtype_name(dtype));
  TS_CHECK(to_ok, ValueError, op, ": to - 1 = ", high - 1, " is out of bounds for ",
           dtype_name(dtype));
}

void random_(const Tensor& x, std::optional<int64_t> from, std::optional<int64_t> to,
             Generator& g) {
  const char* op = "random_";
  int64_t lo = from.value_or(0);
  uint64_t range = 0;
  if (!to && from) {  // random_(to): [0, to)
    to = lo;
    lo = 0;
  }
  if (to) {
    TS_CHECK(lo < *to, ValueError, op, ": expects 'from' to be less than 'to', but got from=", lo,
             " >= to=", *to);
    if (!is_complex(x.dtype())) check_draw_bounds(lo, *to, x.dtype(), op);
    range = static_cast<uint64_t>(*to) - static_cast<uint64_t>(lo);
  } else if (is_floating(x.dtype())) {  // [0, 2^(mantissa + 1))
    range = uint64_t{1} << (mantissa_bits(x.dtype()) + 1);
  } else {
    TS_CHECK(!is_complex(x.dtype()), TypeError, op, ": complex tensors are not supported, got ",
             dtype_name(x.dtype()));
    range = std::min<uint64_t>(int_range(x.dtype()).second,
                               std::numeric_limits<int64_t>::max()) +
            1;  // [0, max]
  }
  autograd::record_random_fill(autograd::RandomGrad::Random, x, op);
  write_fill(x, draw_ints(lo, range, x.shape(), Device(), g));
}

void exponential_(const Tensor& x, double lambd, Generator& g) {
  TS_CHECK(lambd > 0, ValueError, "exponential_: expects lambda > 0.0, but found lambda=", lambd);
  check_floating(x, "exponential_", "tensor (exponential is a continuous distribution)");
  autograd::record_random_fill(autograd::RandomGrad::Exponential, x, "exponential_");
  write_fill(x, exponential(1.0 / lambd, x.shape(), default_float_dtype(), Device(), g));
}

void geometric_(const Tensor& x, double p, Generator& g) {
  TS_CHECK(p > 0 && p < 1, ValueError, "geometric_: expects p to be in (0, 1), but got p=", p);
  autograd::record_random_fill(autograd::RandomGrad::Geometric, x, "geometric_");
  const double lq = std::log1p(-p);
  write_fill(x, map_doubles(host_draws(x.shape(), false, g), [lq](double u) {
               return std::max(1.0, std::ceil(std::log1p(-u) / lq));
             }));
}

void cauchy_(const Tensor& x, double median, double sigma, Generator& g) {
  TS_CHECK(sigma > 0, ValueError, "cauchy_: expects sigma > 0.0, but found sigma=", sigma);
  check_floating(x, "cauchy_", "tensor (Cauchy is a continuous distribution)");
  autograd::record_random_fill(autograd::RandomGrad::Cauchy, x, "cauchy_");
  write_fill(x, map_doubles(host_draws(x.shape(), false, g), [median, sigma](double u) {
               return median + sigma * std::tan(M_PI * (u - 0.5));
             }));
}

void log_normal_(const Tensor& x, double mean, double std, Generator& g) {
  TS_CHECK(std > 0, ValueError, "log_normal_: expects std > 0.0, but found std=", std);
  check_floating(x, "log_normal_", "tensor");
  autograd::record_random_fill(autograd::RandomGrad::LogNormal, x, "log_normal_");
  write_fill(x, map_doubles(host_draws(x.shape(), true, g),
                            [mean, std](double n) { return std::exp(mean + std * n); }));
}

}  // namespace ts
