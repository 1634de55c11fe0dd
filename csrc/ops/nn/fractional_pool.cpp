// fractional_max_pool: fractional_pool.h.
#include "ops/nn/fractional_pool.h"

#include <vector>

#include "autograd/grad_mode.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::nn {

TS_DEFINE_STUB(FractionalMaxIndexKernel, fractional_max_index_stub, "fractional_max_pool");

namespace {

// PyTorch's generate_intervals in float type F: start_i = int((i + u) alpha) - int(u alpha),
// alpha = (n - k) / (m - 1), the last window ending at the input's end.
template <class F>
void intervals(double sample, int64_t n, int64_t m, int64_t k, int64_t* seq) {
  if (m > 1) {
    const F u = static_cast<F>(sample);
    const F alpha = static_cast<F>(n - k) / static_cast<F>(m - 1);
    for (int64_t i = 0; i < m - 1; ++i)
      seq[i] =
          static_cast<int64_t>((static_cast<F>(i) + u) * alpha) - static_cast<int64_t>(u * alpha);
  }
  if (m > 0) seq[m - 1] = n - k;
}

// The host doubles of a floating tensor, flattened.
std::vector<double> host_doubles(const Tensor& t) {
  const Tensor c = contiguous(astype(to_device(t, Device{}), DType::Float64, false));
  const double* p = c.data<double>();
  return std::vector<double>(p, p + c.numel());
}

// (n, c, positions * window) int64: the flat in-plane index of every window element.
Tensor window_indices(const FractionalWindows& w, int64_t n, int64_t c) {
  const int64_t npos = w.out[0] * w.out[1] * w.out[2], kk = w.k[0] * w.k[1] * w.k[2];
  const int64_t per_plane = w.out[0] + w.out[1] + w.out[2];
  Tensor t = Tensor::empty(Shape{n, c, npos * kk}, DType::Int64);
  int64_t* dst = t.data<int64_t>();
  for (int64_t p = 0; p < w.planes; ++p) {
    const int64_t* s0 = w.starts.data() + p * per_plane;
    const int64_t *s1 = s0 + w.out[0], *s2 = s1 + w.out[1];
    for (int64_t a = 0; a < w.out[0]; ++a)
      for (int64_t b = 0; b < w.out[1]; ++b)
        for (int64_t e = 0; e < w.out[2]; ++e)
          for (int64_t i = 0; i < w.k[0]; ++i)
            for (int64_t j = 0; j < w.k[1]; ++j)
              for (int64_t l = 0; l < w.k[2]; ++l)
                *dst++ = ((s0[a] + i) * w.in[1] + s1[b] + j) * w.in[2] + s2[e] + l;
  }
  return t;
}

}  // namespace

std::pair<Tensor, Tensor> fractional_max_pool(const Tensor& x_, int nsp, const Shape& k,
                                              const Shape& out,
                                              const std::optional<Tensor>& samples,
                                              const char* op) {
  TS_CHECK(x_.ndim() == nsp + 1 || x_.ndim() == nsp + 2, ValueError, op, ": expected a ", nsp + 1,
           "-D or ", nsp + 2, "-D input, got shape ", shape_str(x_.shape()));
  TS_CHECK(is_floating(x_.dtype()), TypeError, op, ": expected a floating-point input, got ",
           dtype_name(x_.dtype()));
  const bool unbatched = x_.ndim() == nsp + 1;
  const Tensor x = unbatched ? expand_dims(x_, 0) : x_;
  const int64_t n = x.dim(0), c = x.dim(1);
  Shape in_sp;
  for (int i = 0; i < nsp; ++i) in_sp.push_back(x.dim(2 + i));
  TS_CHECK(k.size() == nsp && out.size() == nsp, ValueError, op, ": kernel_size ", shape_str(k),
           " and output_size ", shape_str(out), " must have ", nsp, " values");
  // PyTorch's bounds: output + kernel - 1 <= input in 2-D, < input in 3-D
  const int64_t slack = nsp == 3 ? 1 : 0;
  for (int i = 0; i < nsp; ++i)
    TS_CHECK(out[i] > 0 && k[i] > 0 && out[i] + k[i] - 1 + slack <= in_sp[i], ValueError, op,
             ": output size ", shape_str(out), " with kernel size ", shape_str(k),
             " is too large for input size ", shape_str(in_sp), " (each output + kernel - 1 must ",
             nsp == 3 ? "be less than" : "be at most", " the input size)");
  std::vector<double> u;
  if (samples) {
    TS_CHECK(samples->shape() == (Shape{n, c, nsp}), ValueError, op,
             ": _random_samples must have shape ", shape_str(Shape{n, c, nsp}), ", got ",
             shape_str(samples->shape()));
    TS_CHECK(is_floating(samples->dtype()), TypeError, op,
             ": _random_samples must be floating, got ", dtype_name(samples->dtype()));
    u = host_doubles(*samples);
  } else {
    Tensor s = Tensor::empty(Shape{n, c, nsp}, x.dtype());
    uniform_(s, 0.0, 1.0, default_generator());
    u = host_doubles(s);
  }
  const bool f64 = x.dtype() == DType::Float64;
  int64_t npos = 1;
  for (int i = 0; i < nsp; ++i) npos *= out[i];
  const int64_t planes = n * c;
  FractionalWindows win;
  win.planes = planes;
  const int off = 3 - nsp;  // a 2-D pool is a 3-D one of depth 1
  for (int i = 0; i < nsp; ++i) {
    win.in[off + i] = in_sp[i];
    win.out[off + i] = out[i];
    win.k[off + i] = k[i];
  }
  const int64_t per_plane = win.out[0] + win.out[1] + win.out[2];
  win.starts.assign(static_cast<size_t>(planes * per_plane), 0);
  for (int64_t p = 0; p < planes; ++p) {
    int64_t* dst = win.starts.data() + p * per_plane;
    for (int j = 0; j < 3; ++j) {
      const int i = j - off;
      if (i >= 0) {
        const int s = nsp == 2 ? 1 - i : i;  // PyTorch's sample order: (w, h) in 2-D
        const double v = u[static_cast<size_t>(p * nsp + s)];
        if (f64)
          intervals<double>(v, in_sp[i], out[i], k[i], dst);
        else
          intervals<float>(v, in_sp[i], out[i], k[i], dst);
      }
      dst += win.out[j];
    }
  }
  int64_t plane = 1;
  for (int i = 0; i < nsp; ++i) plane *= in_sp[i];
  const Tensor planes_x = reshape(x, Shape{n, c, plane});
  Tensor ind;
  if (x.device().is_cpu()) {
    ind = Tensor::empty(Shape{n, c, npos}, DType::Int64);
    if (ind.numel() > 0) fractional_max_index_stub.get(x.device())(contiguous(x), ind, win);
  } else {  // the argmax over a gather of every window's elements
    const int64_t kk = win.k[0] * win.k[1] * win.k[2];
    Tensor windows = to_device(window_indices(win, n, c), x.device());
    autograd::GradModeGuard no_grad(false);
    const Tensor vals = reshape(take_along_axis(planes_x, windows, 2), Shape{n, c, npos, kk});
    // PyTorch's rule, as the CPU kernel: the first maximum, or the last NaN of the window
    const Tensor nan = astype(binary_op(not_equal_def, vals, vals), DType::Int64, false);
    const Tensor last_nan = subtract(wrap_scalar(Scalar::from_int(kk - 1)),
                                     argmax(flip(nan, Shape{3}), int64_t{3}, true));
    const Tensor arg =
        where(any(nan, Axes{Shape{3}}, true), last_nan, argmax(vals, int64_t{3}, true));
    ind = reshape(take_along_axis(reshape(windows, Shape{n, c, npos, kk}), arg, 3),
                  Shape{n, c, npos});
  }
  Tensor y = take_along_axis(planes_x, ind, 2);
  Shape shape{n, c};
  for (int i = 0; i < nsp; ++i) shape.push_back(out[i]);
  y = reshape(y, shape);
  ind = reshape(ind, shape);
  if (unbatched) {
    y = squeeze(y, Shape{0});
    ind = squeeze(ind, Shape{0});
  }
  return {y, ind};
}

}  // namespace ts::nn
