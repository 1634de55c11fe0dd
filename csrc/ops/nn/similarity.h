// cosine_similarity (PyTorch's F.cosine_similarity) as a C++ op written with recorded ops, so
// gradients of every order come from their formulas; scale_grad, the gradient scaling behind
// F.embedding(scale_grad_by_freq=True).
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along `dim`, x1 and x2 first broadcast to
// their common shape (torch's expand_outplace: the norms run over the broadcast extent). The
// clamps' gradient is the identity (torch clamps under no_grad), so a zero vector's gradient is
// finite. Integral operands become the common floating dtype; a non-floating common dtype is a
// TypeError. Autocast: float32.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps);

// A copy of x whose gradient is the incoming one times `scale` (broadcast to x, a constant):
// the values are exactly x's. Embedding(scale_grad_by_freq=True) scales each looked-up row's
// gradient by 1 / (its index's count in the batch). Node "ScaleGradBackward".
Tensor scale_grad(const Tensor& x, const Tensor& scale);

}  // namespace ts::nn
