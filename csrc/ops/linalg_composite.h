// The linalg extension's functions built on the factorizations (ops/linalg_ext.h) that carry
// their own gradient formula (csrc/autograd/formulas_linalg.cpp): pinv, matrix_rank and the
// infinity vector norms.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts {

// Moore-Penrose pseudo-inverse of (..., M, N) -> (..., N, M) via the SVD, dropping singular
// values at or below rtol * the largest (rtol: a scalar or a tensor broadcasting against the
// batch; default max(M, N) * eps). Differentiable with PyTorch's formula (Note [pinv backward]).
Tensor pinv(const Tensor& x, const std::optional<Tensor>& rtol);
// The number of singular values above the same tolerance, int64 (...).
Tensor matrix_rank(const Tensor& x, const std::optional<Tensor>& rtol);
// max (largest) or min of |x| over `axes` for real floating x (the vector norms of ord +-inf);
// the max over an empty reduction is 0. Gradient: PyTorch's norm_backward for p = +-inf.
Tensor vector_norm_inf(const Tensor& x, const Axes& axes, bool keepdims, bool largest);

// x @ x @ ... (n times) for square (..., M, M) by binary exponentiation; n = 0 gives identities
// (a copy in x's dtype), n < 0 powers of the inverse. Differentiable through matmul/inv.
Tensor matrix_power(const Tensor& x, int64_t n);
// A @ B @ ... (left to right) of 2-D tensors, the first may be 1-D (a row) and the last 1-D (a
// column), as torch.linalg.multi_dot; RuntimeError (as torch) for fewer than 2 or non-2-D.
Tensor multi_dot(const std::vector<Tensor>& xs);

}  // namespace ts
