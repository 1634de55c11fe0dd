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

// PyTorch's forms (Note [Arithmetic argument forms]). `op` names the call in errors.
// a + alpha * b and a - alpha * b; a floating alpha with integral (or bool) operands is a
// TypeError, as in PyTorch. alpha == 1 is the plain op.
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op);
Tensor subtract(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op);
// div(a, b, rounding_mode=): None (true division), "trunc" or "floor". Integer operands
// divide exactly in their integer dtype; a zero integer divisor on the CPU raises
// ZeroDivisionError (a CUDA divisor is not read back: the kernel gives 0 there).
enum class RoundingMode : uint8_t { None, Trunc, Floor };
RoundingMode rounding_mode_of(const char* mode, const char* op);  // ValueError if unknown
Tensor divide(const Tensor& a, const Tensor& b, RoundingMode mode, const char* op);
// In place: a <- a op b with the forms above (PyTorch's in-place rules, as binary_op_).
void add_(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op);
void subtract_(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* op);
void divide_(const Tensor& a, const Tensor& b, RoundingMode mode, const char* op);

}  // namespace ts
