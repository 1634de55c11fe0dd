// torch.set_default_dtype's dtype (float32 unless set; Note [default dtype] in _dtypes.py, which
// sets it through _C._set_default_float_dtype): what the creation functions give for Python
// floats, and what integer and bool inputs of torch.special's functions compute in.
#pragma once
#include "core/dtype.h"

namespace ts {

DType default_float_dtype();
void set_default_float_dtype(DType d);

}  // namespace ts
