// What the nn ops (csrc/ops/nn/) call to record themselves; their formulas are in
// formulas_nn.cpp. Each is a no-op unless grad mode is on and an input requires grad.
// Note [Fused nn backward]: each formula calls the op's fused backward kernel when no graph of
// the backward is recorded (the common case); under create_graph it writes the same gradient
// with differentiable ops, so gradients of every order work.
#pragma once
#include "core/tensor.h"

namespace ts::autograd {

// y = softmax / log_softmax(x) over `dim` (normalized).
void record_softmax(const Tensor& x, const Tensor& y, int64_t dim, bool log);
// y = softmax(scale * scores) over the last axis, causal or not.
void record_attention_softmax(const Tensor& scores, const Tensor& y, double scale, bool causal);
// y = layer_norm(x) over the trailing n elements; w, b undefined when absent; mean/rstd the
// kernel's per-row statistics.
void record_layer_norm(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                       const Tensor& mean, const Tensor& rstd, int64_t n, double eps);
// Per-row cross entropy of logits (rows, C) and int64 target (rows,) (ops/nn_fused.h): only the
// logits get a gradient (PyTorch gives the class weight none).
void record_cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight,
                          const Tensor& loss, const Tensor& lse, int64_t ignore_index,
                          double label_smoothing);
// loss = pointwise binary cross entropy of probabilities p and targets y (formulas_loss.cpp):
// PyTorch's derivatives d/dp = (p - y) / max(p (1 - p), 1e-12f), d/dy = log(1 - p) - log p.
void record_binary_cross_entropy(const Tensor& p, const Tensor& y, const Tensor& loss);
// nll (N,) = the CTC loss of log_probs (T, N, C) (formulas_loss.cpp): targets, lengths and
// log_alpha as the kernels of ops/nn/loss_ctc.h took and gave them.
void record_ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                     const Tensor& target_lengths, const Tensor& nll, const Tensor& log_alpha,
                     int64_t blank, bool zero_infinity);
// y = x w^T + b (b undefined when absent).
void record_linear(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y);
void record_gelu(const Tensor& x, const Tensor& y, bool tanh_approx);
// y = max(x, 0).
void record_relu(const Tensor& x, const Tensor& y);
// out (..., dim) = weight[idx] for int64 idx (rows,) in [0, num); pad: the row that gets no
// gradient, or -1.
void record_embedding(const Tensor& weight, const Tensor& rows, const Tensor& idx, int64_t pad);
// y = x * mask * scale (mask bool of x's shape).
void record_dropout(const Tensor& x, const Tensor& y, const Tensor& mask, double scale);

// y = flash attention of q, k, v (the kernel's out, maybe reshaped; lse its statistics).
void record_flash_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& y,
                            const Tensor& out, const Tensor& lse, double scale, bool causal,
                            double dropout_p, uint64_t seed, uint64_t offset);
// out = causal block attention of q, k, v (qc, kc, vc: the contiguous copies the kernels read
// when `copies`; p the probabilities).
void record_causal_block_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& qc, const Tensor& kc, const Tensor& vc,
                                   const Tensor& out, const Tensor& p, double scale, int64_t block,
                                   bool copies);

}  // namespace ts::autograd
