// Backward formulas of fold/unfold (csrc/ops/nn/fold.cpp): each is the other op, recorded, so
// gradients of every order work.
#include "autograd/function.h"
#include "autograd/record_fold.h"
#include "ops/nn/fold.h"

namespace ts::autograd {

namespace {

// attrs: kh, kw, sh, sw, ph, pw, dh, dw, then C, H, W of the image.
Shape window_attrs(const Window2d& w) { return {w.kh, w.kw, w.sh, w.sw, w.ph, w.pw, w.dh, w.dw}; }

Window2d window_of(const BackwardCtx& c) {
  Window2d w;
  w.kh = c.attr(0), w.kw = c.attr(1), w.sh = c.attr(2), w.sw = c.attr(3);
  w.ph = c.attr(4), w.pw = c.attr(5), w.dh = c.attr(6), w.dw = c.attr(7);
  return w;
}

variable_list im2col_bw(const BackwardCtx& c, const variable_list& g) {
  return {nn::col2im_op(g[0], c.attr(8), c.attr(9), c.attr(10), window_of(c))};
}

variable_list col2im_bw(const BackwardCtx& c, const variable_list& g) {
  return {nn::im2col_op(g[0], window_of(c))};
}

}  // namespace

void record_im2col(const Tensor& x, const Tensor& cols, const Window2d& win) {
  if (!needs_grad({&x})) return;
  static const Formula kIm2col{"Im2ColBackward", im2col_bw};
  auto node = record(kIm2col, {x}, {cols});
  Shape attrs = window_attrs(win);
  for (int64_t d = 1; d < 4; ++d) attrs.push_back(x.dim(d));
  node->attrs = std::move(attrs);
}

void record_col2im(const Tensor& cols, const Tensor& x, const Window2d& win) {
  if (!needs_grad({&cols})) return;
  static const Formula kCol2im{"Col2ImBackward", col2im_bw};
  auto node = record(kCol2im, {cols}, {x});
  node->attrs = window_attrs(win);
}

}  // namespace ts::autograd
