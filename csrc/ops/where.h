// where(condition, x1, x2): elements of x1 where condition holds, else of x2.
#pragma once
#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "iter/tensor_iter.h"

namespace ts {

// Operands: out, condition (bool), x1, x2 (both in out's dtype); elements are moved as raw
// bytes of `itemsize`.
using WhereKernel = void (*)(const ElementwiseIter&, int64_t itemsize);
TS_DECLARE_STUB(WhereKernel, where_stub);

// Broadcasts all three; the result dtype promotes x1 and x2 (Python numbers are weak), and
// any condition dtype is read as truthiness (NumPy).
Tensor where(const Tensor& condition, const Tensor& x1, const Tensor& x2);

}  // namespace ts
