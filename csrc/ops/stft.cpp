#include "ops/stft.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/default_dtype.h"
#include "ops/fft.h"
#include "ops/indexing_advanced.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts {

namespace {

Tensor num(double v) { return wrap_scalar(Scalar::from_double(v)); }

Tensor filled(int64_t n, DType dt, Device dev, int64_t v) {
  Tensor z = Tensor::empty(Shape{n}, dt, dev);
  fill_(z, Scalar::from_int(v));
  return z;
}

// int64 positions on the CPU, moved to dev.
Tensor positions(const std::vector<int64_t>& v, Device dev) {
  Tensor t = Tensor::empty(Shape{static_cast<int64_t>(v.size())}, DType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return dev.is_cpu() ? t : to_device(t, dev);
}

// The (B, L) signal padded by p on both sides of its last dim with pad_mode.
Tensor pad_signal(const Tensor& x, int64_t p, const std::string& mode) {
  const int64_t n = x.dim(1);
  if (mode == "constant") {
    Tensor z = Tensor::empty(Shape{x.dim(0), p}, x.dtype(), x.device());
    fill_(z, Scalar::from_int(0));
    return concat({z, x, z}, 1);
  }
  TS_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", ValueError,
           "stft: pad_mode must be 'constant', 'reflect', 'replicate' or 'circular', got '", mode,
           "'");
  TS_CHECK(mode != "reflect" || p < n, RuntimeError, "stft: reflect padding of ", p,
           " must be less than the signal length ", n,
           " (center=True pads n_fft // 2); hint: pass center=False or pad_mode='constant'");
  TS_CHECK(n > 0, RuntimeError, "stft: cannot pad an empty signal with mode '", mode, "'");
  std::vector<int64_t> idx;
  for (int64_t i = -p; i < n + p; ++i) {
    int64_t j = i;
    if (mode == "reflect") {
      j = i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i);
    } else if (mode == "replicate") {
      j = std::min(std::max<int64_t>(i, 0), n - 1);
    } else {
      j = ((i % n) + n) % n;
    }
    idx.push_back(j);
  }
  return index_select(x, 1, positions(idx, x.device()));
}

// The window (ones of win_length by default) zero-padded to n_fft, centered.
Tensor full_window(const std::optional<Tensor>& window, int64_t win, int64_t n_fft, DType real,
                   Device dev, const char* op) {
  Tensor w = window ? *window : filled(win, real, dev, 1);
  TS_CHECK(w.ndim() == 1 && w.dim(0) == win, RuntimeError, op,
           ": expected a 1D window tensor of size equal to win_length=", win,
           ", but got window with size ", shape_str(w.shape()));
  const int64_t left = (n_fft - win) / 2;
  if (win == n_fft) return w;
  return concat({filled(left, w.dtype(), dev, 0), w, filled(n_fft - win - left, w.dtype(), dev, 0)},
                0);
}

struct Sizes {
  int64_t hop, win;
};

Sizes sizes_of(const StftArgs& a, const char* op) {
  const Sizes s{a.hop_length.value_or(a.n_fft / 4), a.win_length.value_or(a.n_fft)};
  TS_CHECK(a.n_fft > 0 && s.hop > 0 && s.win > 0 && s.win <= a.n_fft, RuntimeError, op,
           ": expected 0 < n_fft, 0 < hop_length and 0 < win_length <= n_fft, but got n_fft=",
           a.n_fft, ", hop_length=", s.hop, ", win_length=", s.win);
  return s;
}

DType real_of(DType d) {
  if (d == DType::Complex64) return DType::Float32;
  if (d == DType::Complex128) return DType::Float64;
  return d;
}

}  // namespace

Tensor stft(const Tensor& input, const StftArgs& a, std::optional<bool> return_complex) {
  const bool complex_any = is_complex(input.dtype()) || (a.window && is_complex(a.window->dtype()));
  TS_CHECK(return_complex || complex_any, RuntimeError,
           "stft requires the return_complex parameter be given for real inputs, and will "
           "further require that return_complex=True in a future PyTorch release.");
  TS_CHECK(input.ndim() == 1 || input.ndim() == 2, RuntimeError,
           "stft: expected a 1D or 2D tensor, but got ", input.ndim(), "D (shape ",
           shape_str(input.shape()), ")");
  const Sizes s = sizes_of(a, "stft");
  Tensor x = input.ndim() == 2 ? input : reshape(input, Shape{1, input.dim(0)});
  if (!is_inexact(x.dtype())) x = astype_op(x, default_float_dtype(), false);
  if (a.center) x = pad_signal(x, a.n_fft / 2, a.pad_mode);
  const int64_t len = x.dim(1);
  TS_CHECK(a.n_fft <= len, RuntimeError, "stft: expected 0 < n_fft <= ", len,
           ", but got n_fft=", a.n_fft);
  const int64_t frames = 1 + (len - a.n_fft) / s.hop;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < a.n_fft; ++k) idx.push_back(f * s.hop + k);
  const Tensor fr =
      reshape(index_select(x, 1, positions(idx, x.device())), Shape{x.dim(0), frames, a.n_fft});
  const Tensor w = full_window(a.window, s.win, a.n_fft, real_of(x.dtype()), x.device(), "stft");
  const bool one = a.onesided.value_or(!complex_any);
  TS_CHECK(!(one && complex_any), RuntimeError,
           "stft: cannot have onesided output if window or input is complex");
  Tensor spec = one ? rfft(multiply(fr, w), std::nullopt, -1, FftNorm::Backward)
                    : fft(multiply(fr, w), std::nullopt, -1, FftNorm::Backward);
  if (a.normalized) spec = multiply(spec, num(1.0 / std::sqrt(static_cast<double>(a.n_fft))));
  spec = moveaxis(spec, Shape{-1}, Shape{-2});
  if (input.ndim() == 1) spec = select(spec, 0, 0);
  if (!return_complex.value_or(true)) spec = stack({real(spec), imag(spec)}, -1);
  return spec;
}

Tensor istft(const Tensor& input, const StftArgs& a, std::optional<int64_t> length,
             bool return_complex) {
  TS_CHECK(is_complex(input.dtype()), RuntimeError,
           "istft requires a complex-valued input tensor, got ", dtype_name(input.dtype()),
           "; hint: pass the complex result of stft(..., return_complex=True)");
  TS_CHECK(input.ndim() == 2 || input.ndim() == 3, RuntimeError,
           "istft: expected a 2D or 3D complex tensor (..., freq, frames), got shape ",
           shape_str(input.shape()));
  const Sizes s = sizes_of(a, "istft");
  const Tensor spec =
      input.ndim() == 3 ? input : reshape(input, Shape{1, input.dim(0), input.dim(1)});
  const int64_t n_freq = spec.dim(1), frames = spec.dim(2);
  const bool one = a.onesided.value_or(n_freq != a.n_fft);
  TS_CHECK(!one || n_freq == a.n_fft / 2 + 1, RuntimeError,
           "istft: expected the frequency dimension (3rd to the last) of the input tensor to "
           "match n_fft / 2 + 1 when onesided=True, but got ",
           n_freq);
  // (an ifft of n_fft points padded or cut the frequencies silently)
  TS_CHECK(one || n_freq == a.n_fft, RuntimeError,
           "istft: expected the frequency dimension (3rd to the last) of the input tensor to "
           "match n_fft when onesided=False, but got ", n_freq);
  TS_CHECK(!length || *length >= 0, RuntimeError, "istft: length must be non-negative, got ",
           *length);
  Tensor ff = moveaxis(spec, Shape{-2}, Shape{-1});  // (B, frames, freq)
  if (a.normalized) ff = multiply(ff, num(std::sqrt(static_cast<double>(a.n_fft))));
  Tensor fr;
  if (one && !return_complex) {
    fr = irfft(ff, a.n_fft, -1, FftNorm::Backward);
  } else {
    fr = ifft(ff, a.n_fft, -1, FftNorm::Backward);
    if (!return_complex) fr = real(fr);
  }
  const Tensor w = full_window(a.window, s.win, a.n_fft, real_of(fr.dtype()), fr.device(), "istft");
  fr = multiply(fr, w);
  const int64_t total = checked_add(a.n_fft, checked_mul(s.hop, frames - 1, "istft"), "istft"),
                batch = fr.dim(0);
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < a.n_fft; ++k) idx.push_back(f * s.hop + k);
  const Tensor where_to = positions(idx, fr.device());
  Tensor out = Tensor::empty(Shape{batch, total}, fr.dtype(), fr.device());
  fill_(out, Scalar::from_int(0));
  out = index_add(out, 1, where_to, reshape(fr, Shape{batch, frames * a.n_fft}));
  Tensor wsq;
  {
    autograd::GradModeGuard no_grad(false);
    const Tensor sq = unary_op(square_def, unary_op(abs_def, w));
    wsq = filled(total, sq.dtype(), sq.device(), 0);
    wsq = index_add(wsq, 0, where_to,
                    reshape(broadcast_to(sq, Shape{frames, a.n_fft}), Shape{frames * a.n_fft}));
  }
  const int64_t start = a.center ? a.n_fft / 2 : 0;
  int64_t end = a.center ? total - a.n_fft / 2 : total;
  if (length) end = checked_add(start, *length, "istft");
  const int64_t stop = std::min(end, total);
  const Tensor env = slice(wsq, 0, start, std::max(stop, start), 1);
  {
    autograd::GradModeGuard no_grad(false);
    const bool small =
        item(any(binary_op(less_def, env, num(1e-11)), std::nullopt, false)).to<bool>();
    TS_CHECK(!small, RuntimeError,
             "istft: window overlap add min: 0 (the NOLA condition failed); hint: use a window "
             "and hop_length whose squared windows overlap everywhere");
  }
  Tensor y = divide(slice(out, 1, start, std::max(stop, start), 1), env);
  if (length && y.dim(1) < *length) {
    Tensor z = Tensor::empty(Shape{batch, *length - y.dim(1)}, y.dtype(), y.device());
    fill_(z, Scalar::from_int(0));
    y = concat({y, z}, 1);
  }
  return input.ndim() == 3 ? y : select(y, 0, 0);
}

}  // namespace ts
