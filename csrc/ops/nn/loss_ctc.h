// The CTC loss's kernels (ops/nn/loss.h declares the op; loss_ctc.cpp is the op, its checks and
// its reduction; cpu/ctc_kernels.cpp the CPU kernels; autograd/formulas_loss.cpp the node).
// PyTorch's algorithm (aten/src/ATen/native/LossCTC.cpp): the alpha recursion in log space over
// the blank-extended target l' = (blank, l1, blank, l2, ..., blank), one time step after the
// other, parallel over the batch. The forward returns the per-sample negative log-likelihood and
// log_alpha (N, T, 2 S + 1), which the backward reuses with its beta recursion.
//
// Note [CTC on the host]: only a CPU kernel exists. The op runs it on host copies of a device
// tensor's data and moves the results back (lengths are host values in PyTorch's API anyway,
// and targets are small); the backward does the same. A CUDA kernel registered in these stubs
// would be used instead, with no host round trip.
#pragma once
#include <cstdint>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// The kernels see contiguous tensors checked by the op: log_probs (T, N, C) float32/float64;
// targets (N, S) int64, padded (S the longest target; each sample's labels are in [0, C) and
// none is `blank`); input_lengths/target_lengths (N,) int64 (0 <= input_lengths <= T).
struct CtcArgs {
  Tensor log_probs, targets, input_lengths, target_lengths;
  int64_t blank = 0;
};
// nll (N,) and log_alpha (N, T, 2 S + 1) in log_probs' dtype. Rows t >= input_lengths[n] of
// log_alpha are not written.
using CtcLossKernel = void (*)(const CtcArgs& a, const Tensor& nll, const Tensor& log_alpha);
// grad (T, N, C) of the loss w.r.t. log_probs from the per-sample gradient grad_nll (N,):
// exp(lp) - exp(log sum_{s: l'_s = c} alpha_t(s) beta_t(s) + nll - lp) for t < T_n, times
// grad_nll; 0 for t >= T_n, and for every t of a sample with infinite nll under zero_infinity.
using CtcLossBackwardKernel = void (*)(const CtcArgs& a, const Tensor& grad_nll, const Tensor& nll,
                                       const Tensor& log_alpha, bool zero_infinity,
                                       const Tensor& grad);
TS_DECLARE_STUB(CtcLossKernel, ctc_loss_stub);
TS_DECLARE_STUB(CtcLossBackwardKernel, ctc_loss_backward_stub);

namespace nn {
// The backward of the node ctc_loss records (autograd/formulas_loss.cpp): the gradient w.r.t.
// log_probs (T, N, C), on log_probs' device. targets/lengths as the kernels take them.
Tensor ctc_loss_backward(const Tensor& grad_nll, const Tensor& log_probs, const Tensor& targets,
                         const Tensor& input_lengths, const Tensor& target_lengths,
                         const Tensor& nll, const Tensor& log_alpha, int64_t blank,
                         bool zero_infinity);
}  // namespace nn

}  // namespace ts
