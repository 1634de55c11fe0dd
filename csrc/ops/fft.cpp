#include "ops/fft.h"

#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record_fft.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/manipulation.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(FftKernel, fft_c2c_stub, "fft");
TS_DEFINE_STUB(FftKernel, fft_r2c_stub, "rfft");
TS_DEFINE_STUB(FftKernel, fft_c2r_stub, "irfft");

FftNorm parse_fft_norm(const std::string& norm, const char* op) {
  if (norm == "backward") return FftNorm::Backward;
  if (norm == "ortho") return FftNorm::Ortho;
  if (norm == "forward") return FftNorm::Forward;
  throw ValueError(
      str(op, ": norm must be \"backward\", \"ortho\" or \"forward\", got \"", norm, "\""));
}

namespace {

enum class Kind { C2C, R2C, C2R };

// The complex dtype a transform computes in (Note [FFT engine]): float16/bfloat16/float32
// compute in complex64, float64 in complex128.
// Integer and bool inputs compute in the default floating dtype's (PyTorch's promotion; the
// standard leaves them unspecified).
DType compute_dtype(DType d, bool real_only, const char* op) {
  if (!is_inexact(d)) d = default_float_dtype();
  TS_CHECK(!real_only || !is_complex(d), TypeError, op, ": expected a real floating-point input, ",
           "got ", dtype_name(d), "; hint: use fft for complex input, or take x.real");
  return d == DType::Float64 || d == DType::Complex128 ? DType::Complex128 : DType::Complex64;
}

// The factor a transform of length n in the given direction is multiplied by.
double norm_scale(FftNorm norm, int64_t n, bool forward) {
  if (norm == FftNorm::Ortho) return 1.0 / std::sqrt(static_cast<double>(n));
  const bool divide = (norm == FftNorm::Backward) != forward;
  return divide ? 1.0 / static_cast<double>(n) : 1.0;
}

FftNorm swap_direction(FftNorm norm) {
  if (norm == FftNorm::Ortho) return norm;
  return norm == FftNorm::Backward ? FftNorm::Forward : FftNorm::Backward;
}

// A contiguous copy (or x itself) of dtype `dt` whose dim `ax` is cropped or zero-padded to len.
Tensor fit_axis(const Tensor& x, int64_t ax, int64_t len, DType dt) {
  const int64_t have = x.dim(ax);
  if (have == len && x.dtype() == dt && x.is_contiguous()) return x;
  Shape s = x.shape();
  s[ax] = len;
  Tensor c = Tensor::empty(s, dt, x.device());
  if (c.numel() == 0) return c;
  const int64_t keep = std::min(have, len);
  copy_(keep == len ? c : slice(c, ax, 0, keep, 1), keep == have ? x : slice(x, ax, 0, keep, 1));
  if (keep < len) fill_(slice(c, ax, keep, len, 1), Scalar::from_double(0.0));
  return c;
}

// One batch of 1-D transforms of length n along axis ax (already normalized). Complex
// transforms along an inner axis run in place in the layout (Note [FFT engine]: lanes); the
// real ones move the axis last first.
Tensor transform_axis(const Tensor& x, int64_t ax, int64_t n, Kind kind, bool forward, double scale,
                      DType cdt) {
  // A backend without FFT kernels transforms on the host: one copy each way (a
  // synchronization), the CPU's engine in between. CUDA has its kernels (cuFFT, in
  // cuda/fft_cufft.cpp), so CUDA tensors stay on the device.
  if (!x.device().is_cpu() && !fft_c2c_stub.table[static_cast<int>(x.device().type)])
    return to_device(transform_axis(to_device(x, Device()), ax, n, kind, forward, scale, cdt),
                     x.device());
  const int64_t last = x.ndim() - 1;
  if (kind == Kind::C2C && ax != last) {
    const Tensor t = fit_axis(x, ax, n, cdt);
    Tensor out = Tensor::empty(t.shape(), cdt, x.device());
    if (out.numel() != 0) {
      int64_t batch = 1, inner = 1;
      for (int64_t d = 0; d < ax; ++d) batch *= t.dim(d);
      for (int64_t d = ax + 1; d <= last; ++d) inner *= t.dim(d);
      const FftArgs a{t.data_ptr(), out.data_ptr(), batch, n, inner, forward, scale, x.device()};
      fft_c2c_stub.get(x.device())(a, cdt);
    }
    return out;
  }
  const int64_t n_in = kind == Kind::C2R ? n / 2 + 1 : n;
  const int64_t n_out = kind == Kind::R2C ? n / 2 + 1 : n;
  const DType rdt = to_real(cdt);
  const Tensor t = fit_axis(ax == last ? x : moveaxis(x, Shape{ax}, Shape{last}), last, n_in,
                            kind == Kind::R2C ? rdt : cdt);
  Shape os = t.shape();
  os[last] = n_out;
  Tensor out = Tensor::empty(os, kind == Kind::C2R ? rdt : cdt, x.device());
  if (out.numel() != 0) {
    const FftArgs a{t.data_ptr(), out.data_ptr(), out.numel() / n_out, n, 1,
                    forward,      scale,          x.device()};
    auto& stub = kind == Kind::C2C ? fft_c2c_stub : kind == Kind::R2C ? fft_r2c_stub : fft_c2r_stub;
    stub.get(x.device())(a, cdt);
  }
  return ax == last ? out : moveaxis(out, Shape{last}, Shape{ax});
}

int64_t check_length(int64_t n, const char* op) {
  TS_CHECK(n >= 1, ValueError, op, ": invalid number of data points (", n,
           "); hint: n must be at least 1");
  return n;
}

int64_t default_axis(const Tensor& x, int64_t axis, const char* op) {
  TS_CHECK(x.ndim() >= 1, ValueError, op, ": expected a tensor with at least one dimension, got ",
           "a 0-d tensor");
  return normalize_axis(axis, x.ndim(), op);
}

Tensor c2c_1d(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm, bool fwd,
              const char* op) {
  const DType cdt = compute_dtype(x.dtype(), false, op);
  const int64_t ax = default_axis(x, axis, op);
  const int64_t len = check_length(n ? *n : x.dim(ax), op);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = transform_axis(x, ax, len, Kind::C2C, fwd, norm_scale(norm, len, fwd), cdt);
  }
  autograd::record_fft(autograd::FftKindRec::C2C, x, out, Shape{ax}, Shape{len}, fwd, norm);
  return out;
}

Tensor r2c_1d(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm,
              const char* op) {
  const DType cdt = compute_dtype(x.dtype(), true, op);
  const int64_t ax = default_axis(x, axis, op);
  const int64_t len = check_length(n ? *n : x.dim(ax), op);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = transform_axis(x, ax, len, Kind::R2C, true, norm_scale(norm, len, true), cdt);
  }
  autograd::record_fft(autograd::FftKindRec::R2C, x, out, Shape{ax}, Shape{len}, true, norm);
  return out;
}

Tensor c2r_1d(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm,
              const char* op) {
  const DType cdt = compute_dtype(x.dtype(), false, op);
  const int64_t ax = default_axis(x, axis, op);
  const int64_t len = check_length(n ? *n : 2 * (x.dim(ax) - 1), op);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = transform_axis(x, ax, len, Kind::C2R, false, norm_scale(norm, len, false), cdt);
  }
  autograd::record_fft(autograd::FftKindRec::C2R, x, out, Shape{ax}, Shape{len}, false, norm);
  return out;
}

// Resolved (axis, length) pairs of an n-D transform; for c2r the last length defaults to
// 2*(m-1) of the input's last transformed axis.
struct AxesPlan {
  Shape axes, lens;
};

AxesPlan resolve_axes(const Tensor& x, const std::optional<Shape>& s,
                      const std::optional<Shape>& axes, Kind kind, const char* op) {
  AxesPlan r;
  if (axes) {
    for (int64_t a : *axes) r.axes.push_back(normalize_axis(a, x.ndim(), op));
  } else {
    const int64_t k = s ? static_cast<int64_t>(s->size()) : x.ndim();
    TS_CHECK(k <= x.ndim(), ValueError, op, ": s has ", k, " entries but x has only ", x.ndim(),
             " dimensions");
    for (int64_t a = x.ndim() - k; a < x.ndim(); ++a) r.axes.push_back(a);
  }
  TS_CHECK(!s || s->size() == r.axes.size(), ValueError, op, ": s and axes must have the same ",
           "length, got ", s ? static_cast<int64_t>(s->size()) : 0, " and ", r.axes.size());
  TS_CHECK(kind == Kind::C2C || !r.axes.empty(), ValueError, op, ": needs at least one axis");
  const int64_t k = static_cast<int64_t>(r.axes.size());
  for (int64_t i = 0; i < k; ++i) {
    const int64_t have = x.dim(r.axes[i]);
    const bool c2r_last = kind == Kind::C2R && i + 1 == k;
    const int64_t natural = c2r_last ? 2 * (have - 1) : have;
    const int64_t want = s && (*s)[i] != -1 ? (*s)[i] : natural;
    r.lens.push_back(check_length(want, op));
  }
  return r;
}

Tensor nd_values(const Tensor& x, const AxesPlan& p, FftNorm norm, Kind kind, bool fwd, DType cdt) {
  const int64_t k = static_cast<int64_t>(p.axes.size());
  // NumPy's orders: fftn goes last axis to first; rfftn does the real transform on the last
  // axis first, irfftn last, and the complex ones first to last (it matters for repeated axes).
  Tensor r = x;
  if (kind == Kind::C2C) {
    for (int64_t i = k - 1; i >= 0; --i)
      r = transform_axis(r, p.axes[i], p.lens[i], kind, fwd, norm_scale(norm, p.lens[i], fwd), cdt);
    return r;
  }
  if (kind == Kind::R2C)
    r = transform_axis(r, p.axes[k - 1], p.lens[k - 1], kind, true,
                       norm_scale(norm, p.lens[k - 1], true), cdt);
  for (int64_t i = 0; i < k - 1; ++i)
    r = transform_axis(r, p.axes[i], p.lens[i], Kind::C2C, fwd, norm_scale(norm, p.lens[i], fwd),
                       cdt);
  if (kind == Kind::C2R)
    r = transform_axis(r, p.axes[k - 1], p.lens[k - 1], kind, false,
                       norm_scale(norm, p.lens[k - 1], false), cdt);
  return r;
}

Tensor nd(const Tensor& x, const std::optional<Shape>& s, const std::optional<Shape>& axes,
          FftNorm norm, Kind kind, bool fwd, const char* op) {
  const DType cdt = compute_dtype(x.dtype(), kind == Kind::R2C, op);
  const AxesPlan p = resolve_axes(x, s, axes, kind, op);
  if (p.axes.empty()) return astype_op(x, cdt, true);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = nd_values(x, p, norm, kind, fwd, cdt);
  }
  const auto rec = kind == Kind::C2C   ? autograd::FftKindRec::C2C
                   : kind == Kind::R2C ? autograd::FftKindRec::R2C
                                       : autograd::FftKindRec::C2R;
  autograd::record_fft(rec, x, out, p.axes, p.lens, fwd, norm);
  return out;
}

Tensor frequencies(int64_t n, double d, DType dtype, Device device, bool half, const char* op) {
  TS_CHECK(n >= 0, ValueError, op, ": n must be at least 0, got ", n);
  TS_CHECK(is_floating(dtype), TypeError, op, ": dtype must be a real floating-point dtype, got ",
           dtype_name(dtype));
  if (n == 0) {  // torch's: fftfreq(0) is empty, rfftfreq(0) is [0 / 0] = [nan]
    Tensor f = Tensor::empty(Shape{half ? 1 : 0}, dtype, device);
    if (half) fill_(f, Scalar::from_double(std::numeric_limits<double>::quiet_NaN()));
    return f;
  }
  TS_CHECK(d != 0.0, ValueError, op, ": sample spacing d must be nonzero");
  const int64_t len = half ? n / 2 + 1 : n;
  Tensor f = Tensor::empty(Shape{len}, DType::Float64);
  double* v = f.data<double>();
  const double inv = 1.0 / (static_cast<double>(n) * d);
  for (int64_t i = 0; i < len; ++i) {
    const int64_t k = half || i <= (n - 1) / 2 ? i : i - n;
    v[i] = static_cast<double>(k) * inv;
  }
  if (dtype == DType::Float64 && device.is_cpu()) return f;
  Tensor out = Tensor::empty(Shape{len}, dtype, device);
  copy_(out, f);
  return out;
}

Tensor shift(const Tensor& x, const std::optional<Shape>& axes, bool inverse) {
  Shape ax, shifts;
  if (axes) {
    ax = *axes;
  } else {
    for (int64_t a = 0; a < x.ndim(); ++a) ax.push_back(a);
  }
  for (int64_t a : ax) {
    const int64_t len = x.dim(normalize_axis(a, x.ndim(), inverse ? "ifftshift" : "fftshift"));
    shifts.push_back(inverse ? -(len / 2) : len / 2);
  }
  if (ax.empty()) return x;
  return roll(x, shifts, ax, false);
}

}  // namespace

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return c2c_1d(x, n, axis, norm, true, "fft");
}
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return c2c_1d(x, n, axis, norm, false, "ifft");
}
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return r2c_1d(x, n, axis, norm, "rfft");
}
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return c2r_1d(x, n, axis, norm, "irfft");
}
// hfft(x) = irfft(conj(x)) with the normalization direction swapped; ihfft the reverse.
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  compute_dtype(x.dtype(), false, "hfft");
  return c2r_1d(is_complex(x.dtype()) ? conj(x) : x, n, axis, swap_direction(norm), "hfft");
}
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm) {
  return conj(r2c_1d(x, n, axis, swap_direction(norm), "ihfft"));
}

Tensor fftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm) {
  return nd(x, s, axes, norm, Kind::C2C, true, "fftn");
}
Tensor ifftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm) {
  return nd(x, s, axes, norm, Kind::C2C, false, "ifftn");
}
Tensor rfftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm) {
  return nd(x, s, axes, norm, Kind::R2C, true, "rfftn");
}
Tensor irfftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm) {
  return nd(x, s, axes, norm, Kind::C2R, false, "irfftn");
}

Tensor fftfreq(int64_t n, double d, DType dtype, Device device) {
  return frequencies(n, d, dtype, device, false, "fftfreq");
}
Tensor rfftfreq(int64_t n, double d, DType dtype, Device device) {
  return frequencies(n, d, dtype, device, true, "rfftfreq");
}

Tensor fftshift(const Tensor& x, std::optional<Shape> axes) { return shift(x, axes, false); }
Tensor ifftshift(const Tensor& x, std::optional<Shape> axes) { return shift(x, axes, true); }

}  // namespace ts
