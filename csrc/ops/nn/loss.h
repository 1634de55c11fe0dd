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

}  // namespace ts::nn
