// PyTorch's mask-driven selection and update: masked_fill (out of place and in place) and
// masked_select. The mask is a bool tensor broadcasting into the input (masked_fill) or with
// it (masked_select); errors name the op, the shapes and dtypes.
#pragma once
#include "core/tensor.h"

namespace ts {

// x where mask is false, `value` (a 0-d tensor or wrapped number, cast to x's dtype) where it
// is true; mask broadcasts to x's shape (it may not grow it). Differentiable in x and value.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value, const char* op);
// The same, written into x (PyTorch's in-place rules); `op` names it in errors.
void masked_fill_(const Tensor& x, const Tensor& mask, const Tensor& value, const char* op);
// The 1-d tensor of x's elements where mask is true, x and mask broadcast together (row-major).
Tensor masked_select(const Tensor& x, const Tensor& mask);

}  // namespace ts
