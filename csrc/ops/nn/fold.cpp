// unfold / fold (PyTorch's F.unfold / F.fold): fold.h.
#include "ops/nn/fold.h"

#include <array>

#include "autograd/grad_mode.h"
#include "autograd/record_fold.h"
#include "core/error.h"
#include "ops/copy.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

std::array<int64_t, 2> pair_of(const Shape& v, const char* op, const char* what) {
  TS_CHECK(v.size() == 1 || v.size() == 2, ValueError, op, ": ", what,
           " must be an int or a pair of ints, got ", shape_str(v));
  return {v[0], v[v.size() - 1]};
}

Window2d window(const Shape& kernel, const Shape& dilation, const Shape& padding,
                const Shape& stride, const char* op) {
  const auto k = pair_of(kernel, op, "kernel_size"), d = pair_of(dilation, op, "dilation");
  const auto p = pair_of(padding, op, "padding"), s = pair_of(stride, op, "stride");
  TS_CHECK(k[0] > 0 && k[1] > 0 && d[0] > 0 && d[1] > 0 && s[0] > 0 && s[1] > 0 && p[0] >= 0 &&
               p[1] >= 0,
           ValueError, op, ": kernel_size (", k[0], ", ", k[1], "), dilation (", d[0], ", ", d[1],
           ") and stride (", s[0], ", ", s[1], ") must be positive and padding (", p[0], ", ", p[1],
           ") non-negative");
  Window2d w;
  w.kh = k[0], w.kw = k[1], w.dh = d[0], w.dw = d[1];
  w.ph = p[0], w.pw = p[1], w.sh = s[0], w.sw = s[1];
  return w;
}

// Non-floating input runs through float64 (exact to 2^53) and is cast back.
template <class F>
Tensor in_floating(const Tensor& x, F&& f) {
  if (is_floating(x.dtype())) return f(x);
  return astype(f(astype(x, DType::Float64)), x.dtype());
}

}  // namespace

Tensor im2col_op(const Tensor& x, const Window2d& win) {
  Tensor cols;
  {
    autograd::GradModeGuard no_grad(false);
    cols = im2col(x, win);
  }
  autograd::record_im2col(x, cols, win);
  return cols;
}

Tensor col2im_op(const Tensor& cols, int64_t channels, int64_t h, int64_t w, const Window2d& win) {
  Tensor x;
  {
    autograd::GradModeGuard no_grad(false);
    x = col2im(cols, channels, h, w, win);
  }
  autograd::record_col2im(cols, x, win);
  return x;
}

Tensor unfold(const Tensor& input, const Shape& kernel_size, const Shape& dilation,
              const Shape& padding, const Shape& stride) {
  const char* op = "unfold";
  const Window2d win = window(kernel_size, dilation, padding, stride, op);
  TS_CHECK(input.ndim() == 3 || input.ndim() == 4, ValueError, op,
           ": expected a 3-D or 4-D input (N, C, H, W), got shape ", shape_str(input.shape()));
  const bool unbatched = input.ndim() == 3;
  const Tensor x = unbatched ? expand_dims(input, 0) : input;
  TS_CHECK(win.out_h(x.dim(2)) > 0 && win.out_w(x.dim(3)) > 0, ValueError, op, ": kernel (", win.kh,
           ", ", win.kw, ") with dilation (", win.dh, ", ", win.dw,
           ") does not fit the padded input of spatial size (", x.dim(2) + 2 * win.ph, ", ",
           x.dim(3) + 2 * win.pw, ")");
  const Tensor y = in_floating(x, [&](const Tensor& v) { return im2col_op(v, win); });
  return unbatched ? squeeze(y, Shape{0}) : y;
}

Tensor fold(const Tensor& input, const Shape& output_size, const Shape& kernel_size,
            const Shape& dilation, const Shape& padding, const Shape& stride) {
  const char* op = "fold";
  const Window2d win = window(kernel_size, dilation, padding, stride, op);
  const auto osz = pair_of(output_size, op, "output_size");
  TS_CHECK(input.ndim() == 2 || input.ndim() == 3, ValueError, op,
           ": expected a 2-D or 3-D input (N, C*kh*kw, L), got shape ", shape_str(input.shape()));
  const bool unbatched = input.ndim() == 2;
  const Tensor x = unbatched ? expand_dims(input, 0) : input;
  const int64_t kk = win.kh * win.kw;
  const int64_t bh = std::max<int64_t>(win.out_h(osz[0]), 0);
  const int64_t bw = std::max<int64_t>(win.out_w(osz[1]), 0);
  TS_CHECK(x.dim(1) % kk == 0 && x.dim(2) == bh * bw, ValueError, op, ": input of shape ",
           shape_str(input.shape()), " does not match kernel_size (", win.kh, ", ", win.kw,
           ") (channels divisible by ", kk, ") and ", bh * bw, " blocks for output_size (", osz[0],
           ", ", osz[1], ")");
  const Tensor y = in_floating(
      x, [&](const Tensor& v) { return col2im_op(v, x.dim(1) / kk, osz[0], osz[1], win); });
  return unbatched ? squeeze(y, Shape{0}) : y;
}

}  // namespace ts::nn
