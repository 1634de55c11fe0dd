// cross_entropy and nll_loss (PyTorch's F.cross_entropy / F.nll_loss) with weight,
// ignore_index, reduction and label_smoothing. Class-index cross entropy on floating logits is
// one fused kernel over (rows, C) and one autograd node (autograd/formulas_nn.cpp); class
// probabilities, nll_loss and mixed dtypes are compositions of recorded ops. Autocast runs both
// in float32 (PyTorch's list).
#pragma once
#include <string>

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

}  // namespace ts::nn
