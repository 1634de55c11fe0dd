// Whether a Python number fits a dtype before it is written into a tensor (fill_, x[i] = v).
#pragma once
#include "core/dtype.h"
#include "core/scalar.h"

namespace ts {

// Raises ValueError (a RuntimeError in Python) when `value` cannot be stored in `dtype`
// without overflow, with PyTorch's rules (Note [Checked scalar writes]).
// The largest finite value of a floating dtype (float16: 65504, bfloat16, float32, float64).
double float_max(DType d);

void check_scalar_fits(const Scalar& value, DType dtype, const char* op);

}  // namespace ts
