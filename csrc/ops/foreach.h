// Ops over lists of tensors, as PyTorch's torch._foreach_* (clip_grad_norm_'s norms).
#pragma once
#include <vector>

#include "core/tensor.h"

namespace ts {

// The 2-norm of each tensor over all its elements, as a 1-D tensor of their dtype (float32 or
// float64, all alike, one device): torch._foreach_norm(xs, 2) stacked. One sum-of-squares
// reduction per tensor reads it once (no x * x temporary, no per-tensor BLAS dot); records no
// gradient (clip_grad_norm_ runs it under no_grad).
Tensor foreach_norm(const std::vector<Tensor>& xs);

}  // namespace ts
