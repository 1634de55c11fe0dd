// Whether a Python number fits a dtype before it is written into a tensor (fill_, x[i] = v).
#pragma once
#include "core/dtype.h"
#include "core/scalar.h"

namespace ts {

// Raises ValueError (a RuntimeError in Python) when `value` cannot be stored in `dtype`
// without overflow, with PyTorch's rules (Note [Checked scalar writes]).
void check_scalar_fits(const Scalar& value, DType dtype, const char* op);

}  // namespace ts
