// PyTorch's channel and alpha dropouts (F.dropout1d/2d/3d, F.alpha_dropout,
// F.feature_alpha_dropout, torch.feature_dropout) as C++ ops: the keep mask comes from the
// fused dropout op (ops/random.h, the counter-based generator) and the recorded ops that apply
// it (multiply, add) give the gradients (autograd/formulas*.cpp). F.dropout itself is
// ops/nn/embedding.h's.
#pragma once

#include "core/tensor.h"

namespace ts {
class Generator;
}

namespace ts::nn {

// Zeroes whole channels with probability p and scales the rest by 1/(1-p) (training only, else
// x itself). x is batched (N, C, *) when it has nsp + 2 dims (one mask value per (n, c)),
// else unbatched (C, *) (one per c), as PyTorch's dropout{1,2,3}d (nsp 1, 2, 3); nsp 0 is
// torch.feature_dropout (always batched). inplace writes the result into x (autograd's
// in-place rules) and returns x. `op` names the call in errors; g null: the default generator.
Tensor feature_dropout(const Tensor& x, double p, bool training, bool inplace, int nsp,
                       const char* op, Generator* g);
// SELU-preserving dropout: dropped values become SELU's negative saturation, then an affine
// map restores zero mean and unit variance (PyTorch's alpha_dropout); `feature` drops whole
// channels of (N, C, *) x (feature_alpha_dropout). p = 1 gives x * 0.
Tensor alpha_dropout(const Tensor& x, double p, bool training, bool inplace, bool feature,
                     const char* op, Generator* g);
// PyTorch's probability check: ValueError naming `op` unless 0 <= p <= 1.
void check_dropout_p(double p, const char* op);

}  // namespace ts::nn
