// y = x W^T + b (nn.Linear's forward) as one op, so a backend can add the bias inside the GEMM
// (cuBLASLt's bias epilogue) instead of reading and writing the whole output a second time.
#pragma once
#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// out (M, N) = x (M, K) W^T + b, W (N, K) and b (N,) of out's dtype; returns false when the
// backend declines (then the op falls back to matmul + add).
using LinearBiasKernel = bool (*)(const Tensor& out, const Tensor& x, const Tensor& w,
                                  const Tensor& b);
TS_DECLARE_STUB(LinearBiasKernel, linear_bias_stub);

// x (..., K), w (N, K), b (N,) -> (..., N); any dtypes/devices matmul + add accept.
Tensor linear_bias(const Tensor& x, const Tensor& w, const Tensor& b);

}  // namespace ts
