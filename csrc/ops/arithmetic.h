// Arithmetic elementwise ops (add, subtract, multiply, divide, negative, ...).
#pragma once
#include "ops/elementwise.h"

namespace ts {

TS_DECLARE_STUB(ElementwiseKernel, add_stub);
TS_DECLARE_STUB(ElementwiseKernel, subtract_stub);
TS_DECLARE_STUB(ElementwiseKernel, multiply_stub);
TS_DECLARE_STUB(ElementwiseKernel, divide_stub);
TS_DECLARE_STUB(ElementwiseKernel, negative_stub);
TS_DECLARE_STUB(ElementwiseKernel, conj_stub);

extern const ElementwiseDef kAdd, kSubtract, kMultiply, kDivide, kNegative, kConj;

inline Tensor add(const Tensor& a, const Tensor& b) { return binary_op(kAdd, a, b); }
inline Tensor subtract(const Tensor& a, const Tensor& b) { return binary_op(kSubtract, a, b); }
inline Tensor multiply(const Tensor& a, const Tensor& b) { return binary_op(kMultiply, a, b); }
inline Tensor divide(const Tensor& a, const Tensor& b) { return binary_op(kDivide, a, b); }
inline Tensor negative(const Tensor& x) { return unary_op(kNegative, x); }
// Complex conjugate; real inputs are returned as they are (no copy).
Tensor conj(const Tensor& x);

}  // namespace ts
