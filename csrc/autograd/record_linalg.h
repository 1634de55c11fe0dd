// What the composite linalg ops (csrc/ops/linalg_composite.cpp) call to record themselves; the
// formulas are in formulas_linalg.cpp. Each is a no-op unless grad mode is on and x requires
// grad.
#pragma once
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts::autograd {

// p = pinv(x).
void record_pinv(const Tensor& x, const Tensor& p);
// out = max or min of |x| over axes (real floating x).
void record_inf_norm(const Tensor& x, const Tensor& out, const Axes& axes, bool keepdims);
// The LU family (csrc/ops/linalg_lu.cpp): (lu, piv) = lu_factor_ex(a); (p, l, u) = linalg_lu(a);
// x = lu_solve(lu, piv, b, left, adjoint); x = solve_triangular(a, b, upper, left, unit).
void record_lu_factor(const Tensor& a, const Tensor& lu, const Tensor& piv);
void record_lu(const Tensor& a, const Tensor& p, const Tensor& l, const Tensor& u);
void record_lu_solve(const Tensor& lu, const Tensor& piv, const Tensor& b, const Tensor& x,
                     bool left, bool adjoint);
void record_solve_triangular(const Tensor& a, const Tensor& b, const Tensor& x, bool upper,
                             bool left, bool unit);

}  // namespace ts::autograd
