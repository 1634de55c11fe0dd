// PyTorch's spellings over the linalg ops (ops/linalg_ext.h) that compute something of their
// own: logdet, cholesky_inverse, cholesky_solve, vander. The legacy forms that only rearrange
// linalg results (torch.svd, qr, cholesky, slogdet, det, inverse, pinverse, matrix_power) call
// those ops from their bindings (csrc/python/bind_matmul.cpp). Differentiable through the ops used.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts {

// log(det(x)): for real x NaN where det < 0 and -inf where det == 0; for complex x the complex
// log (log|det| + i arg(det); -inf + nan*i where det == 0), as torch.
Tensor logdet(const Tensor& x);
// The inverse of A = L L^H (or U^H U with upper) from its Cholesky factor.
Tensor cholesky_inverse(const Tensor& factor, bool upper);
// X with A X = b where A = L L^H (L = factor; U^H U with upper).
Tensor cholesky_solve(const Tensor& b, const Tensor& factor, bool upper);

// The (len(x), N) Vandermonde matrix of 1-D x: columns x**(N-1) ... x**0 (or increasing), by a
// cumulative product; integer and bool x give int64 (torch.vander). N defaults to len(x). The
// size is checked before anything is allocated.
Tensor vander(const Tensor& x, std::optional<int64_t> N, bool increasing);

}  // namespace ts
