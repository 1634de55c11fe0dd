// PyTorch's F.pad as a C++ op: constant, reflect, replicate and circular padding of the
// trailing dims, negative pads cropping; a composition of recorded ops (slices, flips,
// broadcasts, index_select, concat), whose formulas give the gradients of every order.
#pragma once
#include <string>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ts::nn {

// `pad` lists (left, right) pairs starting from the LAST dim (at most x.ndim() pairs); value
// fills constant padding. ValueError naming pad for a pad that does not fit or an unknown mode.
Tensor pad(const Tensor& x, const Shape& pad, const std::string& mode, const Scalar& value);

}  // namespace ts::nn
