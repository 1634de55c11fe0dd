// cosine_similarity (PyTorch's F.cosine_similarity) as a C++ op written with recorded ops, so
// gradients of every order come from their formulas.
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along `dim`, x1 and x2 first broadcast to
// their common shape (torch's expand_outplace: the norms run over the broadcast extent). The
// clamps' gradient is the identity (torch clamps under no_grad), so a zero vector's gradient is
// finite. Integral operands become the common floating dtype; a non-floating common dtype is a
// TypeError. Autocast: float32.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps);

}  // namespace ts::nn
