// Backward formulas of the nn ops (csrc/ops/nn/, Note [Fused nn backward] in record_nn.h):
// softmax, layer norm, cross entropy, linear, GELU, ReLU, embedding, dropout, attention.
#include <cmath>

#include "autograd/function.h"
#include "autograd/record_nn.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/elementwise_defs.h"
#include "ops/indexing_advanced.h"
#include "ops/linalg.h"
#include "ops/math.h"
#include "ops/attention.h"
#include "ops/attention_causal.h"
#include "ops/nn/attention.h"
#include "ops/nn/softmax.h"
#include "ops/nn_fused.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }
Tensor mul(const Tensor& a, const Tensor& b) { return multiply(a, b); }
Tensor U(const ElementwiseDef& d, const Tensor& x) { return unary_op(d, x); }
Tensor B(const ElementwiseDef& d, const Tensor& a, const Tensor& b) { return binary_op(d, a, b); }
Tensor rowsum(const Tensor& x, int64_t dim) { return sum(x, Shape{dim}, true, std::nullopt); }
Tensor rowmean(const Tensor& x, int64_t dim) { return mean(x, Shape{dim}, true); }

using G = const variable_list&;
#define FORMULA(name) variable_list name(const BackwardCtx& c, G g)

void stamp_site(Node& n) {
  if (anomaly_enabled()) n.creation_site = "(see the Python traceback of the forward call)";
}

// ---- softmax: attrs (dim, log); saved y.
FORMULA(softmax_bw) {
  const int64_t dim = c.attr(0);
  const bool log = c.attr(1) != 0;
  const Tensor y = c.saved(0);
  if (!grad_enabled()) return {nn::softmax_backward_values(y, g[0], dim, log)};
  if (y.ndim() == 0) return {mul(g[0], sc(0.0))};  // a single element: constant 1 (log: 0)
  if (log) return {subtract(g[0], mul(U(exp_def, y), rowsum(g[0], dim)))};
  return {mul(y, subtract(g[0], rowsum(mul(g[0], y), dim)))};
}

// ---- attention softmax: attrs (causal); scalars (scale); saved y. Masked entries have y == 0,
// so they get no gradient either way.
FORMULA(attention_softmax_bw) {
  const bool causal = c.attr(0) != 0;
  const double scale = c.scalar(0);
  const Tensor y = c.saved(0);
  if (!grad_enabled()) return {attention_softmax_backward(y, contiguous(g[0]), scale, causal)};
  return {mul(sc(scale), mul(y, subtract(g[0], rowsum(mul(g[0], y), -1))))};
}

// ---- layer norm: attrs (n, has_w, has_b); scalars (eps); saved x, mean, rstd[, w].
FORMULA(layer_norm_bw) {
  const int64_t n = c.attr(0);
  const bool has_w = c.attr(1) != 0, has_b = c.attr(2) != 0;
  const Tensor x = c.saved(0), mean_ = c.saved(1), rstd_ = c.saved(2);
  const Tensor w = has_w ? c.saved(3) : Tensor();
  if (!grad_enabled()) {
    auto [gx, gw, gb] = layer_norm_backward(g[0], x, mean_, rstd_, w, has_b);
    return {gx, gw, gb};
  }
  // The statistics recomputed from x, so second derivatives see their dependence on x.
  const int64_t rows = n > 0 ? x.numel() / n : 0;
  const Tensor xr = reshape(x, Shape{rows, n}), gr = reshape(g[0], Shape{rows, n});
  const Tensor xc = subtract(xr, rowmean(xr, 1));
  const Tensor rstd = U(reciprocal_def, U(sqrt_def, add(rowmean(mul(xc, xc), 1), sc(c.scalar(0)))));
  const Tensor xhat = mul(xc, rstd);
  const Tensor gg = has_w ? mul(gr, reshape(w, Shape{n})) : gr;
  Tensor gx, gw, gb;
  if (c.needs(0))
    gx = reshape(mul(rstd, subtract(subtract(gg, rowmean(gg, 1)), mul(xhat, rowmean(mul(gg, xhat), 1)))),
                 x.shape());
  if (has_w && c.needs(1)) gw = reshape(sum(mul(gr, xhat), Shape{0}, false, std::nullopt), w.shape());
  if (has_b && c.needs(2)) gb = sum(gr, Shape{0}, false, std::nullopt);
  return {gx, gw, gb};
}

// ---- cross entropy rows: attrs (ignore_index, has_w); scalars (label_smoothing); saved
// logits, target, lse[, weight].
FORMULA(cross_entropy_bw) {
  const int64_t ignore_index = c.attr(0);
  const bool has_w = c.attr(1) != 0;
  const double eps = c.scalar(0);
  const Tensor x0 = c.saved(0), target = c.saved(1), lse = c.saved(2);
  const Tensor w = has_w ? c.saved(3) : Tensor();
  if (!grad_enabled())
    return {cross_entropy_backward(g[0], x0, target, w, lse, ignore_index, eps)};
  // 16-bit logits of a float32 loss (Note [Cross entropy on 16-bit logits]): the formula in
  // float32, through a recorded cast so that it reaches the logits.
  const Tensor x = x0.dtype() == g[0].dtype() ? x0 : astype_op(x0, g[0].dtype(), false);
  // d loss_n / d x_nc = (1 - eps) w_t (p_c - [c == t]) + eps / C (sum(w) p_c - w_c), times g_n,
  // 0 for ignored rows. The terms without x are constants of the graph.
  const int64_t classes = x.dim(1);
  Tensor onehot, keep_f, wt, wsum, wrow;
  {
    GradModeGuard no_grad(false);
    const Tensor keep = B(not_equal_def, target, wrap_scalar(Scalar::from_int(ignore_index)));
    const Tensor safe = where(keep, target, wrap_scalar(Scalar::from_int(0)));
    const Tensor cls = arange(Scalar::from_int(0), Scalar::from_int(classes), Scalar::from_int(1),
                              DType::Int64, x.device());
    onehot = astype(B(equal_def, expand_dims(safe, -1), cls), x.dtype(), false);
    keep_f = astype(keep, x.dtype(), false);
    if (has_w) {
      wt = mul(sum(mul(onehot, w), Shape{-1}, false, std::nullopt), keep_f);
      wsum = sum(w, std::nullopt, false, std::nullopt);
      wrow = w;
    } else {
      wt = keep_f;
      wsum = sc(double(classes));
      wrow = sc(1.0);
    }
  }
  const Tensor p = nn::softmax(x, 1, std::nullopt, false);
  const Tensor gk = expand_dims(mul(g[0], keep_f), -1);
  Tensor grad = mul(expand_dims(mul(sc(1 - eps), wt), -1), subtract(p, onehot));
  if (eps > 0) grad = add(grad, mul(sc(eps / double(classes)), subtract(mul(wsum, p), wrow)));
  return {mul(gk, grad)};
}

// ---- linear: attrs (has_b); saved x, w. The weight's gradient is formed in W's (out, in)
// layout directly (accumulating a transposed one costs a strided copy of the weight).
FORMULA(linear_bw) {
  const Tensor x = c.saved(0), w = c.saved(1);
  const Tensor& gy = g[0];
  const int64_t n = w.dim(0), k = w.dim(1);
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < gy.ndim(); ++d) rows *= gy.dim(d);
  const Tensor g2 = gy.ndim() == 2 ? gy : reshape(gy, Shape{rows, n});
  Tensor gx, gw, gb;
  if (c.needs(0)) gx = matmul(gy, w);
  if (c.needs(1)) gw = matmul(matrix_transpose(g2), x.ndim() == 2 ? x : reshape(x, Shape{rows, k}));
  if (c.attr(0) && c.needs(2)) gb = sum(g2, Shape{0}, false, std::nullopt);
  return {gx, gw, gb};
}

// ---- GELU: attrs (tanh); saved x. Under create_graph the gradient is g * gelu'(x), gelu'
// an op of its own (the fused kernel) whose derivative gelu'' is written with ops.
constexpr double kSqrt2OverPi = 0.7978845608028654, kA = 0.044715;
FORMULA(gelu_deriv_bw) {
  const Tensor x = c.saved(0);
  Tensor d2;
  if (c.attr(0)) {
    const Tensor x2 = mul(x, x);
    const Tensor th = U(tanh_def, mul(sc(kSqrt2OverPi), add(x, mul(sc(kA), mul(x2, x)))));
    const Tensor up = mul(sc(kSqrt2OverPi), add(sc(1.0), mul(sc(3 * kA), x2)));
    const Tensor upp = mul(sc(6 * kSqrt2OverPi * kA), x);
    const Tensor inner = add(subtract(up, mul(mul(x, th), mul(up, up))), mul(sc(0.5), mul(x, upp)));
    d2 = mul(subtract(sc(1.0), mul(th, th)), inner);
  } else {
    const Tensor x2 = mul(x, x);
    const Tensor pdf = mul(U(exp_def, mul(sc(-0.5), x2)), sc(1 / std::sqrt(2 * M_PI)));
    d2 = mul(pdf, subtract(sc(2.0), x2));
  }
  return {mul(g[0], d2)};
}
const Formula kGeluDeriv{"GeluBackwardBackward", gelu_deriv_bw};

Tensor gelu_deriv(const Tensor& x, bool tanh_approx) {
  Tensor d;
  {
    GradModeGuard no_grad(false);
    Tensor ones = Tensor::empty(x.shape(), x.dtype(), x.device());
    fill_(ones, Scalar::from_int(1));
    d = gelu_backward(x, ones, tanh_approx);
  }
  if (needs_grad({&x})) {
    auto node = record(kGeluDeriv, {x}, {d});
    node->attrs = Shape{tanh_approx ? 1 : 0};
    node->save(x);
  }
  return d;
}

FORMULA(gelu_bw) {
  const bool tanh_approx = c.attr(0) != 0;
  const Tensor x = c.saved(0);
  if (!grad_enabled()) return {gelu_backward(x, g[0], tanh_approx)};
  return {mul(g[0], gelu_deriv(x, tanh_approx))};
}

// ---- ReLU: saved y. The gradient passes where y > 0 (and where y is NaN, as PyTorch's).
FORMULA(relu_bw) {
  const Tensor y = c.saved(0);
  if (!grad_enabled()) return {relu_backward(y, g[0])};
  return {where(B(less_equal_def, y, sc(0.0)), sc(0.0), g[0])};
}

// ---- embedding: attrs (pad); saved idx. The weight's gradient: g's rows added into zeros
// (index_add, itself differentiable in g).
FORMULA(embedding_bw) {
  const Tensor idx = c.saved(0);
  const int64_t pad = c.attr(0);
  const InputMeta& w = c.input(0);
  Tensor g2 = reshape(g[0], Shape{idx.numel(), w.shape[1]});
  if (pad >= 0) {
    Tensor is_pad;
    {
      GradModeGuard no_grad(false);
      is_pad = expand_dims(B(equal_def, idx, wrap_scalar(Scalar::from_int(pad))), -1);
    }
    g2 = where(is_pad, sc(0.0), g2);
  }
  Tensor zero = Tensor::empty(w.shape, g2.dtype(), g2.device());
  fill_(zero, Scalar::from_int(0));
  return {index_add(zero, 0, idx, g2)};
}

// ---- dropout: scalars (scale); saved mask. Linear in g: g * scale where kept (16-bit
// gradients scaled in float32, like the forward and PyTorch).
FORMULA(dropout_bw) {
  const Tensor mask = c.saved(0);
  const double scale = c.scalar(0);
  if (!grad_enabled()) return {dropout_backward(g[0], mask, scale)};  // one pass
  const DType dt = g[0].dtype();
  Tensor gs;
  if (dt == DType::Float16 || dt == DType::BFloat16)
    gs = astype_op(mul(astype_op(g[0], DType::Float32, false), sc(scale)), dt, false);
  else
    gs = mul(g[0], sc(scale));
  return {where(mask, gs, sc(0.0))};
}


// ---- attention: the gradients of dropout(softmax(scale * q k^T [causal])) v written with ops
// (for create_graph); mask: the dropout factors (keep / (1 - p)) of the forward, or undefined.
variable_list attention_grads_composite(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const Tensor& g, double scale, bool causal,
                                        const Tensor& mask) {
  const Tensor p = nn::attention_softmax(matmul(q, matrix_transpose(k)), scale, causal);
  const Tensor pd = mask.defined() ? mul(p, astype_op(mask, p.dtype(), false)) : p;
  const Tensor dv = matmul(matrix_transpose(pd), g);
  Tensor dp = matmul(g, matrix_transpose(v));
  if (mask.defined()) dp = mul(dp, astype_op(mask, dp.dtype(), false));
  const Tensor ds = mul(mul(p, subtract(dp, rowsum(mul(dp, p), -1))), sc(scale));
  return {matmul(ds, k), matmul(matrix_transpose(ds), q), dv};
}

// ---- flash attention: attrs (causal, seed, offset, out is the output); scalars (scale,
// dropout_p); saved q, k, v, out (the kernel's (B, H, L, Ev) result), lse. The backward kernel
// recomputes the probabilities from lse and the dropout mask from (seed, offset) (Note
// [Attention dropout]); under create_graph the composite rebuilds the mask from the kernels'
// rule (attention_dropout_mask, Note [Attention dropout mask]).
FORMULA(flash_attention_bw) {
  const bool causal = c.attr(0) != 0;
  const uint64_t seed = static_cast<uint64_t>(c.attr(1)), offset = static_cast<uint64_t>(c.attr(2));
  const double scale = c.scalar(0), p = c.scalar(1);
  const Tensor q = c.saved(0), k = c.saved(1), v = c.saved(2), out = c.saved(3), lse = c.saved(4);
  const Tensor q4 = nn::attention_heads(q), k4 = nn::attention_heads(k), v4 = nn::attention_heads(v);
  const Tensor g4 = g[0].shape() == out.shape() ? g[0] : reshape(g[0], out.shape());
  Tensor dq, dk, dv;
  if (!grad_enabled()) {
    std::tie(dq, dk, dv) = flash_attention_backward(q4, k4, v4, out, lse, g4, scale, causal, p, seed,
                                                    offset);
  } else {
    Tensor mask;
    const auto from_cudnn = cudnn_attention().from_cudnn_dropout;
    TS_CHECK(!(p > 0.0 && from_cudnn && from_cudnn(lse)), NotImplementedError,
             "scaled_dot_product_attention: double backward through dropout is not available "
             "after cuDNN's fused attention (its dropout mask cannot be rebuilt); call "
             "ts.backends.cuda.enable_cudnn_sdp(False) before the forward");
    if (p > 0.0) {
      int64_t n = 1;
      for (int64_t d = 0; d + 2 < q.ndim(); ++d) n *= q.dim(d);
      const int64_t L = q.dim(q.ndim() - 2), S = k.dim(k.ndim() - 2);
      Shape mshape(q4.shape().begin(), q4.shape().end() - 1);
      mshape.push_back(S);
      mask = reshape(attention_dropout_mask(n, L, S, p, seed, offset, q.dtype(), q.device()),
                     mshape);
    }
    auto grads = attention_grads_composite(q4, k4, v4, g4, scale, causal, mask);
    dq = grads[0];
    dk = grads[1];
    dv = grads[2];
  }
  auto back = [](const Tensor& d, const Tensor& like) {
    return d.shape() == like.shape() ? d : reshape(d, like.shape());
  };
  return {back(dq, q), back(dk, k), back(dv, v)};
}

// ---- causal block attention: attrs (block, has contiguous copies); scalars (scale); saved q,
// k, v, p[, the contiguous q, k, v the kernels read].
FORMULA(causal_block_attention_bw) {
  const int64_t block = c.attr(0);
  const bool copies = c.attr(1) != 0;
  const double scale = c.scalar(0);
  const Tensor q = c.saved(0), k = c.saved(1), v = c.saved(2), p = c.saved(3);
  if (!grad_enabled()) {
    const Tensor qc = copies ? c.saved(4) : q, kc = copies ? c.saved(5) : k,
                 vc = copies ? c.saved(6) : v;
    const Tensor gc = copies ? contiguous(g[0]) : g[0];
    auto [dq, dk, dv] = causal_block_attention_backward(qc, kc, vc, p, gc, scale, block);
    return {dq, dk, dv};
  }
  return attention_grads_composite(q, k, v, g[0], scale, true, Tensor());
}

}  // namespace

void record_embedding(const Tensor& weight, const Tensor& rows, const Tensor& idx, int64_t pad) {
  if (!needs_grad({&weight})) return;
  static const Formula kEmbedding{"EmbeddingBackward", embedding_bw};
  auto node = record(kEmbedding, {weight}, {rows});
  stamp_site(*node);
  node->attrs = Shape{pad};
  node->save(idx);
}

void record_dropout(const Tensor& x, const Tensor& y, const Tensor& mask, double scale) {
  if (!needs_grad({&x})) return;
  static const Formula kDropout{"NativeDropoutBackward", dropout_bw};
  auto node = record(kDropout, {x}, {y});
  stamp_site(*node);
  node->scalars.push_back(scale);
  node->save(mask);
}

void record_softmax(const Tensor& x, const Tensor& y, int64_t dim, bool log) {
  if (!needs_grad({&x})) return;
  static const Formula kSoftmax{"SoftmaxBackward", softmax_bw},
      kLogSoftmax{"LogSoftmaxBackward", softmax_bw};
  auto node = record(log ? kLogSoftmax : kSoftmax, {x}, {y});
  stamp_site(*node);
  node->attrs = Shape{dim, log ? 1 : 0};
  node->save(y, /*is_output=*/true);
}

void record_attention_softmax(const Tensor& scores, const Tensor& y, double scale, bool causal) {
  if (!needs_grad({&scores})) return;
  static const Formula kAttentionSoftmax{"AttentionSoftmaxBackward", attention_softmax_bw};
  auto node = record(kAttentionSoftmax, {scores}, {y});
  stamp_site(*node);
  node->attrs = Shape{causal ? 1 : 0};
  node->scalars.push_back(scale);
  node->save(y, /*is_output=*/true);
}

void record_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                       const Tensor& mean, const Tensor& rstd, int64_t n, double eps) {
  if (!needs_grad({&x, &w, &b})) return;
  static const Formula kLayerNorm{"NativeLayerNormBackward", layer_norm_bw};
  auto node = record(kLayerNorm, {x, w, b}, {y});
  stamp_site(*node);
  node->attrs = Shape{n, w.defined() ? 1 : 0, b.defined() ? 1 : 0};
  node->scalars.push_back(eps);
  node->save(x);
  node->save(mean);
  node->save(rstd);
  if (w.defined()) node->save(w);
}

void record_cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                          const Tensor& loss, const Tensor& lse, int64_t ignore_index,
                          double label_smoothing) {
  if (!needs_grad({&logits})) return;
  static const Formula kCrossEntropy{"CrossEntropyLossBackward", cross_entropy_bw};
  auto node = record(kCrossEntropy, {logits}, {loss});
  stamp_site(*node);
  node->attrs = Shape{ignore_index, weight.defined() ? 1 : 0};
  node->scalars.push_back(label_smoothing);
  node->save(logits);
  node->save(target);
  node->save(lse);
  if (weight.defined()) node->save(weight);
}

void record_linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  if (!needs_grad({&x, &w, &b})) return;
  static const Formula kLinear{"LinearBackward", linear_bw};
  auto node = record(kLinear, {x, w, b}, {y});
  stamp_site(*node);
  node->attrs = Shape{b.defined() ? 1 : 0};
  node->save(x);
  node->save(w);
}

void record_gelu(const Tensor& x, const Tensor& y, bool tanh_approx) {
  if (!needs_grad({&x})) return;
  static const Formula kGelu{"GeluBackward", gelu_bw};
  auto node = record(kGelu, {x}, {y});
  stamp_site(*node);
  node->attrs = Shape{tanh_approx ? 1 : 0};
  node->save(x);
}

void record_relu(const Tensor& x, const Tensor& y) {
  if (!needs_grad({&x})) return;
  static const Formula kRelu{"ReluBackward", relu_bw};
  auto node = record(kRelu, {x}, {y});
  stamp_site(*node);
  node->save(y, /*is_output=*/true);
}


void record_flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
                            const Tensor& out, const Tensor& lse, double scale, bool causal,
                            double dropout_p, uint64_t seed, uint64_t offset) {
  if (!needs_grad({&q, &k, &v})) return;
  static const Formula kFlash{"FlashAttentionBackward", flash_attention_bw};
  auto node = record(kFlash, {q, k, v}, {y});
  stamp_site(*node);
  const bool same = out.impl() == y.impl();
  node->attrs = Shape{causal ? 1 : 0, static_cast<int64_t>(seed), static_cast<int64_t>(offset),
                      same ? 1 : 0};
  node->scalars = {scale, dropout_p};
  node->save(q);
  node->save(k);
  node->save(v);
  node->save(out, /*is_output=*/same);
  node->save(lse);
}

void record_causal_block_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& qc, const Tensor& kc, const Tensor& vc,
                                   const Tensor& out, const Tensor& p, double scale, int64_t block,
                                   bool copies) {
  if (!needs_grad({&q, &k, &v})) return;
  static const Formula kCausal{"CausalBlockAttentionBackward", causal_block_attention_bw};
  auto node = record(kCausal, {q, k, v}, {out});
  stamp_site(*node);
  node->attrs = Shape{block, copies ? 1 : 0};
  node->scalars.push_back(scale);
  node->save(q);
  node->save(k);
  node->save(v);
  node->save(p);
  if (copies) {
    node->save(qc);
    node->save(kc);
    node->save(vc);
  }
}

}  // namespace ts::autograd
