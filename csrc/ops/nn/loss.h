// cross_entropy and nll_loss (PyTorch's F.cross_entropy / F.nll_loss) with weight,
// ignore_index, reduction and label_smoothing. Class-index cross entropy on floating logits is
// one fused kernel over (rows, C) and one autograd node (autograd/formulas_nn.cpp); class
// probabilities, nll_loss and mixed dtypes are compositions of recorded ops. Autocast runs both
// in float32 (PyTorch's list).
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts::nn {

enum class Reduction { None, Mean, Sum };
// "none" | "mean" | "sum"; ValueError naming `op` otherwise.
Reduction parse_reduction(const std::string& s, const char* op);

// input (N, C, d1, ...) or (C,); target: class indices (N, d1, ...) / () of an integer dtype,
// or class probabilities of input's shape. weight: (C,) or undefined.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     int64_t ignore_index, Reduction reduction, double label_smoothing);
// input: log-probabilities (N, C, d1, ...) or (C,); 'mean' divides by the summed weights of
// the kept targets.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                int64_t ignore_index, Reduction reduction);

// ---- the pointwise losses (loss_pointwise.cpp): PyTorch's F.<name>, input and target
// broadcast unless noted; compositions of recorded ops except binary_cross_entropy, whose
// node carries PyTorch's clamped derivative (autograd/formulas_loss.cpp). Autocast: float32.
// weight (optional, input's shape): 'mean' divides sum(w l) by sum(w) (mse, l1) or by the
// element count (huber), as PyTorch does.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction,
                const Tensor& weight);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction,
               const Tensor& weight);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (L1 when beta == 0; beta >= 0).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta);
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (delta > 0).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta,
                  const Tensor& weight);
// -w (y max(log p, -100) + (1 - y) max(log(1 - p), -100)); target of input's shape, weight
// broadcast. Refused under CUDA autocast, as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction);
// w ((1 - y) x + (1 + (pw - 1) y) log(1 + exp(-x))), evaluated stably; target of input's
// shape, weight and pos_weight broadcast.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, Reduction reduction,
                                        const Tensor& pos_weight);
// target (log target - input) pointwise (input holds log-probabilities; target too when
// log_target); batchmean divides the sum by the batch size.
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool batchmean,
              bool log_target);
// log(1 + exp(-y x)) in input's shape (target broadcasts to it).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction);
// max(0, -y (x1 - x2) + margin); the three tensors have one rank and broadcast.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction reduction);
// x where y == 1, max(0, margin - x) where y == -1 (both terms for other y, as PyTorch
// computes it); input and target broadcast.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction);

// loss as it is ('none'), or its mean or sum.
Tensor reduce_loss(const Tensor& loss, Reduction reduction);
// Note [Hinge kinks]: max(v, 0) as PyTorch's losses take it. clamp_min_zero is clamp_min(v, 0)
// (margin_ranking, hinge_embedding, cosine_embedding, triplet: gradient 1 at v == 0, NaN kept);
// positive_part keeps v only where v > 0 (multi_margin / multilabel_margin's kernels: gradient 0
// at v == 0, NaN counts 0). maximum would split the gradient at the tie.
Tensor clamp_min_zero(const Tensor& v);
Tensor positive_part(const Tensor& v);

// ---- the embedding and margin losses (loss_embedding.cpp): PyTorch's F.<name>, compositions of
// recorded ops (gradients of every order). Autocast: float32 (PyTorch's list).
// exp(x) - y x (log_input) or x - y log(x + eps); full adds the Stirling term
// y log y - y + 0.5 log(2 pi y) where y > 1. input and target broadcast.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction);
// 0.5 (log max(var, eps) + (x - y)^2 / max(var, eps)) (+ 0.5 log 2 pi when full); var of
// input's shape, or it without the last axis, or with one differing axis of size 1; var >= 0.
// The eps clamp passes gradients through unchanged (PyTorch clamps in place under no_grad).
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full,
                         double eps, Reduction reduction);
// 1 - cos(x1, x2) where y == 1, max(0, cos - margin) where y == -1, 0 elsewhere (cos over the
// last axis with PyTorch's 1e-12 in each squared norm); inputs (N, D) with target (N,), or
// (D,) with a 0-d target.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction reduction);
// -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) (times weight), averaged over the last axis.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                                   Reduction reduction);
// sum over i != y of w[y] max(0, margin - x[y] + x[i])^p / C, p in {1, 2}; input (N, C) with
// integer target (N,), or (C,) with a 0-d or (1,) target; weight (C,) or undefined.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, double p, double margin,
                         const Tensor& weight, Reduction reduction);
// sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])) / C;
// integer target of input's shape ((N, C) or (C,)) lists the classes, ended by the first -1.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction);
// PyTorch's pairwise_distance: the p-norm of x1 - x2 + eps over the last axis.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim);
// max(0, margin + d(a, p) - d(a, n)), d = pairwise_distance(., ., p, eps); swap uses
// min(d(a, n), d(p, n)). The three tensors have one rank; margin > 0.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction);
// The triplet loss from precomputed distances (triplet_margin_with_distance_loss's user
// distance function): max(0, margin + d_pos - d_neg), d_neg = min(d_neg, d_swap) when given.
Tensor triplet_loss_from_distances(const Tensor& d_pos, const Tensor& d_neg, const Tensor& d_swap,
                                   double margin, Reduction reduction);
// The three triplet tensors have one rank (ValueError naming `op` otherwise).
void check_triplet_ranks(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                         const char* op);

// ---- the CTC loss (loss_ctc.cpp; kernels and Note [CTC on the host] in loss_ctc.h): -log of the
// total probability of every alignment of each target, PyTorch's F.ctc_loss. log_probs (T, N, C)
// or unbatched (T, C), float32/float64 (autocast: float32); targets padded (N, S) or
// concatenated 1-D (sum(target_lengths)), labels in [0, C) other than blank; lengths (N,) as
// host values or integer tensors. 'mean' divides each loss by its target length (at least 1)
// and averages; zero_infinity zeroes the infinite losses and their gradients. One node
// (CtcLossBackward) with PyTorch's gradient; its own derivative is not implemented.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets,
                const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity);
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity);

}  // namespace ts::nn
