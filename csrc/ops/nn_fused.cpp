#include "ops/nn_fused.h"

#include "core/error.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/memory_format.h"

namespace ts {

TS_DEFINE_STUB(SoftmaxKernel, softmax_stub, "softmax");
TS_DEFINE_STUB(SoftmaxBackwardKernel, softmax_backward_stub, "softmax_backward");
TS_DEFINE_STUB(AttentionSoftmaxKernel, attention_softmax_stub, "attention_softmax");
TS_DEFINE_STUB(AttentionSoftmaxBackwardKernel, attention_softmax_backward_stub,
               "attention_softmax_backward");
TS_DEFINE_STUB(CrossEntropyKernel, cross_entropy_stub, "cross_entropy");
TS_DEFINE_STUB(CrossEntropyBackwardKernel, cross_entropy_backward_stub, "cross_entropy_backward");
TS_DEFINE_STUB(LayerNormKernel, layer_norm_stub, "layer_norm");
TS_DEFINE_STUB(LayerNormBackwardKernel, layer_norm_backward_stub, "layer_norm_backward");
TS_DEFINE_STUB(GeluKernel, gelu_stub, "gelu");
TS_DEFINE_STUB(GeluBackwardKernel, gelu_backward_stub, "gelu_backward");
TS_DEFINE_STUB(ReluBackwardKernel, relu_backward_stub, "relu_backward");
TS_DEFINE_STUB(Im2colKernel, im2col_stub, "im2col");
TS_DEFINE_STUB(Col2imKernel, col2im_stub, "col2im");
TS_DEFINE_STUB(Conv2dKernel, conv2d_stub, "conv2d");
TS_DEFINE_STUB(Conv2dBackwardKernel, conv2d_backward_stub, "conv2d_backward");
TS_DEFINE_STUB(MaxPoolKernel, max_pool_stub, "max_pool2d");
TS_DEFINE_STUB(MaxPoolBackwardKernel, max_pool_backward_stub, "max_pool2d_backward");

namespace {

void check_float(const Tensor& x, const char* op) {
  TS_CHECK(is_floating(x.dtype()), TypeError, op,
           ": expected a floating-point tensor (float16, bfloat16, float32, float64), got ",
           dtype_name(x.dtype()));
}

// A second operand must match the first one's shape and dtype.
void check_same(const Tensor& a, const Tensor& b, const char* op) {
  TS_CHECK(a.shape() == b.shape(), ValueError, op, ": shapes ", shape_str(a.shape()), " and ",
           shape_str(b.shape()), " differ");
  TS_CHECK(a.dtype() == b.dtype(), TypeError, op, ": dtypes ", dtype_name(a.dtype()), " and ",
           dtype_name(b.dtype()), " differ");
  TS_CHECK(a.device() == b.device(), ValueError, op, ": tensors on ", a.device().str(), " and ",
           b.device().str());
}

int64_t last_dim(const Tensor& x, const char* op) {
  TS_CHECK(x.ndim() >= 1, ValueError, op, ": expected at least one dimension, got a 0-d tensor");
  return x.dim(x.ndim() - 1);
}

Tensor empty_like(const Tensor& x) { return Tensor::empty(x.shape(), x.dtype(), x.device()); }

DType stat_dtype(DType d) { return d == DType::Float64 ? DType::Float64 : DType::Float32; }

void check_nchw(const Tensor& x, const char* op) {
  check_float(x, op);
  TS_CHECK(x.ndim() == 4, ValueError, op, ": expected a 4-D (N, C, H, W) tensor, got shape ",
           shape_str(x.shape()));
}

void check_window(const Window2d& w, const char* op) {
  TS_CHECK(w.kh > 0 && w.kw > 0 && w.sh > 0 && w.sw > 0 && w.dh > 0 && w.dw > 0 && w.ph >= 0 &&
               w.pw >= 0,
           ValueError, op, ": kernel (", w.kh, ", ", w.kw, "), stride (", w.sh, ", ", w.sw,
           ") and dilation (", w.dh, ", ", w.dw, ") must be positive and padding (", w.ph, ", ",
           w.pw, ") non-negative");
}

}  // namespace

Tensor softmax_last(const Tensor& x, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  check_float(x, op);
  const int64_t n = last_dim(x, op);
  const Tensor xc = contiguous(x);
  Tensor out = empty_like(x);
  if (x.numel() > 0) softmax_stub.get(x.device())(xc, out, x.numel() / n, n, log);
  return out;
}

Tensor softmax_last_backward(const Tensor& y, const Tensor& gy, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  check_float(y, op);
  check_same(y, gy, op);
  const int64_t n = last_dim(y, op);
  Tensor gx = empty_like(y);
  if (y.numel() > 0)
    softmax_backward_stub.get(y.device())(contiguous(y), contiguous(gy), gx, y.numel() / n, n, log);
  return gx;
}

namespace {

AttentionRows attention_rows(const Tensor& scores, double scale, bool causal, int64_t block,
                             const char* op) {
  TS_CHECK(scores.ndim() >= 2, ValueError, op, ": expected scores of shape (..., L, S), got ",
           shape_str(scores.shape()));
  TS_CHECK(block >= 0, ValueError, op, ": block must be >= 0, got ", block);
  // A block of at least a row's length writes whole rows: clamp it so that rounding a key
  // count up to a block cannot overflow.
  const int64_t n = scores.dim(scores.ndim() - 1);
  return {std::max<int64_t>(scores.dim(scores.ndim() - 2), 1), scale, causal,
          std::min(block, std::max<int64_t>(n, 1))};
}

}  // namespace

Tensor attention_softmax(const Tensor& scores, double scale, bool causal, int64_t block) {
  const char* op = "attention_softmax";
  check_float(scores, op);
  const AttentionRows geom = attention_rows(scores, scale, causal, block, op);
  const int64_t n = scores.dim(scores.ndim() - 1);
  Tensor out = empty_like(scores);
  if (scores.numel() > 0)
    attention_softmax_stub.get(scores.device())(contiguous(scores), out, scores.numel() / n, n,
                                                geom);
  return out;
}

Tensor attention_softmax_backward(const Tensor& y, const Tensor& gy, double scale, bool causal,
                                  int64_t block) {
  const char* op = "attention_softmax_backward";
  check_float(y, op);
  check_same(y, gy, op);
  const AttentionRows geom = attention_rows(y, scale, causal, block, op);
  const int64_t n = y.dim(y.ndim() - 1);
  Tensor gx = empty_like(y);
  if (y.numel() > 0)
    attention_softmax_backward_stub.get(y.device())(contiguous(y), contiguous(gy), gx,
                                                    y.numel() / n, n, geom);
  return gx;
}

namespace {

// Shared checks of cross entropy's logits/target/weight; returns the contiguous weight (or
// an undefined tensor).
Tensor check_cross_entropy(const Tensor& x, const Tensor& target, const Tensor& weight,
                           double smoothing, DType compute, const char* op) {
  check_float(x, op);
  TS_CHECK(compute == x.dtype() ||
               (compute == DType::Float32 && x.device().type == DeviceType::CUDA &&
                (x.dtype() == DType::BFloat16 || x.dtype() == DType::Float16)),
           TypeError, op, ": a ", dtype_name(compute), " loss of ", dtype_name(x.dtype()),
           " logits on ", x.device().str(),
           " (only 16-bit logits on CUDA may have a float32 loss)");
  TS_CHECK(x.ndim() == 2, ValueError, op, ": expected logits of shape (rows, C), got ",
           shape_str(x.shape()));
  TS_CHECK(target.dtype() == DType::Int64, TypeError, op,
           ": expected int64 class indices as target, got ", dtype_name(target.dtype()));
  TS_CHECK(target.ndim() == 1 && target.dim(0) == x.dim(0), ValueError, op, ": target of shape ",
           shape_str(target.shape()), " does not match logits of shape ", shape_str(x.shape()),
           " (expected (", x.dim(0), ",))");
  TS_CHECK(target.device() == x.device(), ValueError, op, ": logits on ", x.device().str(),
           " and target on ", target.device().str());
  TS_CHECK(smoothing >= 0 && smoothing <= 1, ValueError, op,
           ": label_smoothing must be in [0, 1], got ", smoothing);
  if (!weight.defined()) return Tensor();
  TS_CHECK(weight.ndim() == 1 && weight.dim(0) == x.dim(1), ValueError, op, ": weight of shape ",
           shape_str(weight.shape()), " does not match ", x.dim(1), " classes");
  TS_CHECK(weight.dtype() == compute, TypeError, op, ": weight dtype ",
           dtype_name(weight.dtype()), " differs from the loss dtype ", dtype_name(compute));
  TS_CHECK(weight.device() == x.device(), ValueError, op, ": logits on ", x.device().str(),
           " and weight on ", weight.device().str());
  return contiguous(weight);
}

// CPU targets are checked here; CUDA kernels report bad ones as deferred device errors, since
// reading the targets on the host would synchronize with the device.
void check_targets_cpu(const Tensor& t, int64_t classes, int64_t ignore_index, const char* op) {
  if (!t.device().is_cpu()) return;
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    TS_CHECK(p[i] == ignore_index || (p[i] >= 0 && p[i] < classes), IndexError, op, ": target ",
             p[i], " is out of range [0, ", classes, ") (ignore_index is ", ignore_index, ")");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> cross_entropy_forward(const Tensor& logits, const Tensor& target,
                                                         const Tensor& weight, int64_t ignore_index,
                                                         double label_smoothing,
                                                         std::optional<DType> loss_dtype) {
  const char* op = "cross_entropy";
  const DType cd = loss_dtype.value_or(logits.dtype());
  const Tensor wc = check_cross_entropy(logits, target, weight, label_smoothing, cd, op);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  const Tensor tc = contiguous(target);
  check_targets_cpu(tc, classes, ignore_index, op);
  const Device dev = logits.device();
  Tensor loss = Tensor::empty(Shape{rows}, cd, dev);
  Tensor lse = Tensor::empty(Shape{rows}, stat_dtype(cd), dev);
  Tensor row_weight = Tensor::empty(Shape{rows}, cd, dev);
  if (rows > 0)
    cross_entropy_stub.get(dev)(contiguous(logits), tc, wc.defined() ? &wc : nullptr, loss, lse,
                                row_weight, rows, classes,
                                CrossEntropyOpts{ignore_index, label_smoothing});
  return {loss, lse, row_weight};
}

Tensor cross_entropy_backward(const Tensor& g, const Tensor& logits, const Tensor& target,
                              const Tensor& weight, const Tensor& lse, int64_t ignore_index,
                              double label_smoothing) {
  const char* op = "cross_entropy_backward";
  // The loss's dtype is the gradient's: the logits' own, or float32 for 16-bit CUDA logits.
  const DType cd = g.dtype();
  const Tensor wc = check_cross_entropy(logits, target, weight, label_smoothing, cd, op);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  TS_CHECK(g.shape() == target.shape() && g.device() == logits.device(), ValueError, op,
           ": the loss gradient must be (", rows, ",) ", dtype_name(cd), ", got ",
           shape_str(g.shape()), " ", dtype_name(g.dtype()));
  TS_CHECK(lse.shape() == target.shape() && lse.dtype() == stat_dtype(cd) &&
               lse.device() == logits.device(),
           ValueError, op, ": lse must be (", rows, ",) ", dtype_name(stat_dtype(cd)));
  const Tensor tc = contiguous(target);
  check_targets_cpu(tc, classes, ignore_index, op);
  Tensor gx = empty_like(logits);
  if (logits.numel() > 0)
    cross_entropy_backward_stub.get(logits.device())(
        contiguous(g), contiguous(logits), tc, wc.defined() ? &wc : nullptr, contiguous(lse), gx,
        rows, classes, CrossEntropyOpts{ignore_index, label_smoothing});
  return gx;
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_forward(const Tensor& x, int64_t n, const Tensor& w,
                                                      const Tensor& b, double eps) {
  const char* op = "layer_norm";
  check_float(x, op);
  TS_CHECK(n > 0 && x.numel() % n == 0, ValueError, op, ": cannot normalize groups of ", n,
           " elements of a tensor of shape ", shape_str(x.shape()));
  for (const Tensor* p : {&w, &b})
    if (p->defined()) {
      TS_CHECK(p->numel() == n, ValueError, op, ": weight/bias of shape ", shape_str(p->shape()),
               " do not have ", n, " elements");
      TS_CHECK(p->dtype() == x.dtype(), TypeError, op, ": weight/bias dtype ",
               dtype_name(p->dtype()), " differs from input dtype ", dtype_name(x.dtype()));
    }
  const int64_t rows = x.numel() / n;
  Tensor y = empty_like(x);
  Tensor mean = Tensor::empty(Shape{rows}, stat_dtype(x.dtype()), x.device());
  Tensor rstd = Tensor::empty(Shape{rows}, stat_dtype(x.dtype()), x.device());
  const Tensor wc = w.defined() ? contiguous(w) : Tensor(),
               bc = b.defined() ? contiguous(b) : Tensor();
  if (rows > 0)
    layer_norm_stub.get(x.device())(contiguous(x), w.defined() ? &wc : nullptr,
                                    b.defined() ? &bc : nullptr, eps, y, mean, rstd, rows, n);
  return {y, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& gy, const Tensor& x,
                                                       const Tensor& mean, const Tensor& rstd,
                                                       const Tensor& w, bool has_bias) {
  const char* op = "layer_norm_backward";
  check_float(x, op);
  check_same(x, gy, op);
  const int64_t rows = mean.numel();
  TS_CHECK(rows > 0 ? x.numel() % rows == 0 : x.numel() == 0, ValueError, op, ": statistics of ",
           rows, " rows do not fit input shape ", shape_str(x.shape()));
  TS_CHECK(
      rstd.numel() == rows && mean.dtype() == stat_dtype(x.dtype()) && rstd.dtype() == mean.dtype(),
      ValueError, op, ": mean/rstd must be (", rows, ",) ", dtype_name(stat_dtype(x.dtype())));
  const int64_t n = rows > 0 ? x.numel() / rows : 0;
  if (w.defined())
    TS_CHECK(w.numel() == n && w.dtype() == x.dtype(), ValueError, op, ": weight of shape ",
             shape_str(w.shape()), " does not match ", n, " normalized elements");
  Tensor gx = empty_like(x);
  Tensor gw = w.defined() ? empty_like(w) : Tensor();
  Tensor gb = has_bias ? Tensor::empty(w.defined() ? w.shape() : Shape{n}, x.dtype(), x.device())
                       : Tensor();
  if (rows > 0) {
    const Tensor wc = w.defined() ? contiguous(w) : Tensor();
    layer_norm_backward_stub.get(x.device())(contiguous(gy), contiguous(x), contiguous(mean),
                                             contiguous(rstd), w.defined() ? &wc : nullptr, gx,
                                             w.defined() ? &gw : nullptr, has_bias ? &gb : nullptr,
                                             rows, n);
  } else {
    if (gw.defined()) fill_(gw, Scalar::from_double(0));
    if (gb.defined()) fill_(gb, Scalar::from_double(0));
  }
  return {gx, gw, gb};
}

Tensor gelu(const Tensor& x, bool tanh_approx) {
  check_float(x, "gelu");
  Tensor out = empty_elementwise(x.shape(), x.dtype(), x.device(), {&x});
  if (x.numel() > 0) gelu_stub.get(x.device())(copy_in_layout_of(x, out, false), out, tanh_approx);
  return out;
}

Tensor gelu_backward(const Tensor& x, const Tensor& gy, bool tanh_approx) {
  check_float(x, "gelu_backward");
  check_same(x, gy, "gelu_backward");
  Tensor gx = empty_elementwise(x.shape(), x.dtype(), x.device(), {&gy, &x});
  if (x.numel() > 0)
    gelu_backward_stub.get(x.device())(copy_in_layout_of(x, gx, false),
                                       copy_in_layout_of(gy, gx, false), gx, tanh_approx);
  return gx;
}

Tensor relu_backward(const Tensor& y, const Tensor& gy) {
  check_float(y, "relu_backward");
  check_same(y, gy, "relu_backward");
  Tensor gx = empty_elementwise(y.shape(), y.dtype(), y.device(), {&gy, &y});
  if (y.numel() > 0)
    relu_backward_stub.get(y.device())(copy_in_layout_of(y, gx, false),
                                       copy_in_layout_of(gy, gx, false), gx);
  return gx;
}

Tensor im2col(const Tensor& x, const Window2d& win) {
  check_nchw(x, "im2col");
  check_window(win, "im2col");
  const int64_t ho = win.out_h(x.dim(2)), wo = win.out_w(x.dim(3));
  TS_CHECK(ho > 0 && wo > 0, ValueError, "im2col: kernel (", win.kh, ", ", win.kw,
           ") with dilation (", win.dh, ", ", win.dw, ") does not fit the padded input of shape ",
           shape_str(x.shape()));
  const int64_t rows = checked_mul(checked_mul(x.dim(1), win.kh, "im2col"), win.kw, "im2col");
  Tensor cols =
      Tensor::empty(Shape{x.dim(0), rows, checked_mul(ho, wo, "im2col")}, x.dtype(), x.device());
  if (cols.numel() > 0) im2col_stub.get(x.device())(contiguous(x), cols, win);
  return cols;
}

Tensor col2im(const Tensor& cols, int64_t channels, int64_t h, int64_t w, const Window2d& win) {
  check_float(cols, "col2im");
  check_window(win, "col2im");
  const int64_t ho = win.out_h(h), wo = win.out_w(w);
  const int64_t rows = checked_mul(checked_mul(channels, win.kh, "col2im"), win.kw, "col2im");
  const int64_t len = checked_mul(ho, wo, "col2im");
  TS_CHECK(cols.ndim() == 3 && cols.dim(1) == rows && cols.dim(2) == len,
           ValueError, "col2im: columns of shape ", shape_str(cols.shape()), " do not match ",
           channels, " channels of a (", h, ", ", w, ") image with a (", win.kh, ", ", win.kw,
           ") kernel (expected (N, ", rows, ", ", len, "))");
  Tensor x = Tensor::empty(Shape{cols.dim(0), channels, h, w}, cols.dtype(), cols.device());
  if (x.numel() > 0) col2im_stub.get(cols.device())(contiguous(cols), x, win);
  return x;
}

namespace {
void check_conv_dtype(const Tensor& t, DType dt, const char* op) {
  TS_CHECK(t.dtype() == dt && (dt == DType::Float32 || dt == DType::Float64), TypeError, op,
           ": expected float32 or float64 operands of one dtype, got ", dtype_name(t.dtype()),
           " and ", dtype_name(dt));
}
}  // namespace

Tensor conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& b, const Window2d& win) {
  check_nchw(x, "conv2d");
  check_window(win, "conv2d");
  check_conv_dtype(w, x.dtype(), "conv2d");
  TS_CHECK(w.ndim() == 4 && w.dim(1) == x.dim(1) && w.dim(2) == win.kh && w.dim(3) == win.kw,
           ValueError, "conv2d: weight of shape ", shape_str(w.shape()), " does not match input ",
           shape_str(x.shape()), " and kernel (", win.kh, ", ", win.kw, ")");
  if (b.defined()) {
    check_conv_dtype(b, x.dtype(), "conv2d");
    TS_CHECK(b.ndim() == 1 && b.dim(0) == w.dim(0), ValueError, "conv2d: bias of shape ",
             shape_str(b.shape()), " does not match ", w.dim(0), " output channels");
  }
  const int64_t ho = win.out_h(x.dim(2)), wo = win.out_w(x.dim(3));
  TS_CHECK(ho > 0 && wo > 0, ValueError, "conv2d: kernel (", win.kh, ", ", win.kw,
           ") with dilation (", win.dh, ", ", win.dw, ") does not fit the padded input of shape ",
           shape_str(x.shape()));
  Tensor y = Tensor::empty(Shape{x.dim(0), w.dim(0), ho, wo}, x.dtype(), x.device());
  if (y.numel() == 0) return y;
  const Tensor bc = b.defined() ? contiguous(b) : Tensor();
  conv2d_stub.get(x.device())(contiguous(x), contiguous(w), b.defined() ? &bc : nullptr, y, win);
  return y;
}

std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& g, const Tensor& x,
                                                   const Tensor& w, const Window2d& win,
                                                   bool need_x, bool need_w, bool need_b) {
  check_nchw(g, "conv2d_backward");
  check_nchw(x, "conv2d_backward");
  check_window(win, "conv2d_backward");
  check_conv_dtype(x, g.dtype(), "conv2d_backward");
  check_conv_dtype(w, g.dtype(), "conv2d_backward");
  const int64_t n = x.dim(0), c = x.dim(1), o = w.dim(0);
  TS_CHECK(w.ndim() == 4 && w.dim(1) == c && w.dim(2) == win.kh && w.dim(3) == win.kw &&
               g.dim(0) == n && g.dim(1) == o && g.dim(2) == win.out_h(x.dim(2)) &&
               g.dim(3) == win.out_w(x.dim(3)),
           ValueError, "conv2d_backward: gradient ", shape_str(g.shape()), ", input ",
           shape_str(x.shape()), " and weight ", shape_str(w.shape()), " do not match");
  Tensor gx, gw, gb;
  if (need_x) gx = Tensor::empty(x.shape(), g.dtype(), g.device());
  if (need_w) gw = Tensor::empty(w.shape(), g.dtype(), g.device());
  if (need_b) gb = Tensor::empty(Shape{o}, g.dtype(), g.device());
  for (Tensor* t : {&gx, &gw, &gb})
    if (t->defined()) fill_(*t, Scalar::from_double(0));
  if (g.numel() > 0)
    conv2d_backward_stub.get(g.device())(contiguous(g), contiguous(x), contiguous(w),
                                         need_x ? &gx : nullptr, need_w ? &gw : nullptr,
                                         need_b ? &gb : nullptr, win);
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, const Window2d& win,
                                                   int64_t out_h, int64_t out_w) {
  check_nchw(x, "max_pool2d");
  check_window(win, "max_pool2d");
  TS_CHECK(out_h >= 0 && out_w >= 0, ValueError, "max_pool2d: negative output size (", out_h, ", ",
           out_w, ")");
  // Every window must start inside the input or its left padding, so it sees an element.
  TS_CHECK(out_h == 0 || checked_mul(out_h - 1, win.sh, "max_pool2d") - win.ph < x.dim(2),
           ValueError,
           "max_pool2d: output height ", out_h, " has windows past the input");
  TS_CHECK(out_w == 0 || checked_mul(out_w - 1, win.sw, "max_pool2d") - win.pw < x.dim(3),
           ValueError,
           "max_pool2d: output width ", out_w, " has windows past the input");
  const Shape shape{x.dim(0), x.dim(1), out_h, out_w};
  Tensor y = Tensor::empty(shape, x.dtype(), x.device());
  Tensor idx = Tensor::empty(shape, DType::Int64, x.device());
  if (y.numel() > 0) max_pool_stub.get(x.device())(contiguous(x), y, idx, win);
  return {y, idx};
}

Tensor max_pool2d_backward(const Tensor& gy, const Tensor& idx, int64_t h, int64_t w) {
  check_nchw(gy, "max_pool2d_backward");
  TS_CHECK(idx.shape() == gy.shape() && idx.dtype() == DType::Int64, ValueError,
           "max_pool2d_backward: indices must be int64 of the gradient's shape ",
           shape_str(gy.shape()));
  const Tensor ic = contiguous(idx);
  if (ic.device().is_cpu()) {  // a bad index would write outside the gradient's planes
    const int64_t* ip = ic.data<int64_t>();
    for (int64_t i = 0; i < ic.numel(); ++i)
      TS_CHECK(ip[i] >= 0 && ip[i] < h * w, IndexError, "max_pool2d_backward: index ", ip[i],
               " is outside a (", h, ", ", w, ") plane");
  }
  Tensor gx = Tensor::empty(Shape{gy.dim(0), gy.dim(1), h, w}, gy.dtype(), gy.device());
  fill_(gx, Scalar::from_double(0));
  if (gy.numel() > 0) max_pool_backward_stub.get(gy.device())(contiguous(gy), ic, gx);
  return gx;
}

}  // namespace ts
