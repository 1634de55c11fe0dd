// Linear algebra core of the standard: matmul, tensordot, vecdot (matrix_transpose is a view).
#pragma once
#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// out (batch..., m, n) = a (batch..., m, k) @ b (batch..., k, n); a and b already broadcast
// to the full batch shape (as views), all three in the same dtype.
using MatmulKernel = void (*)(const Tensor& out, const Tensor& a, const Tensor& b);
TS_DECLARE_STUB(MatmulKernel, matmul_stub);

Tensor matmul(const Tensor& a, const Tensor& b);
Tensor tensordot(const Tensor& a, const Tensor& b, const Shape& axes_a, const Shape& axes_b);
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t naxes);
Tensor vecdot(const Tensor& a, const Tensor& b, int64_t axis);

}  // namespace ts
