// PyTorch's pointwise functions composed of elementwise ops (clamp, lerp, addcmul, addcdiv,
// nan_to_num, isclose/allclose, fmod): one definition each, with PyTorch's dtype rules and
// errors naming the op. Their gradients come from the differentiable ops they are made of
// (those of the in-place lerp_, addcmul_, addcdiv_ from one node each, below).
#pragma once
#include <optional>

#include "core/scalar.h"
#include "core/tensor.h"

namespace ts {

// torch.clamp: clip (Note [clip]) after PyTorch's promotion: a Python float bound (a wrapped
// number) makes an integer or bool input the default float dtype, a tensor bound of another
// dtype promotes an integer or bool input (a floating input keeps its dtype), and tensor bounds
// broadcast the input to their shape. No bound at all gives a copy (as ts.clip).
// `op` names the caller in errors.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
             const char* op = "clamp");

// input + weight * (end - input); input must be floating or complex (RuntimeError).
Tensor lerp(const Tensor& input, const Tensor& end, const Tensor& weight, const char* op = "lerp");
// input + value * tensor1 * tensor2 (value == 1 multiplies nothing).
Tensor addcmul(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value,
               const char* op = "addcmul");
// input + value * tensor1 / tensor2; two integral divisors raise RuntimeError (PyTorch).
Tensor addcdiv(const Tensor& input, const Tensor& t1, const Tensor& t2, const Scalar& value,
               const char* op = "addcdiv");

// The in-place methods x.clamp_ (x.clip_, x.clamp_min_, x.clamp_max_), x.lerp_, x.addcmul_,
// x.addcdiv_: the op's result written into x with PyTorch's in-place rules (Note [torch
// in-place]), `op` (the method's name) naming it in every error. When nothing records the
// result is written straight into x (Note [In-place without a temporary]): clamp_ as max then
// min into x, the others as x += (the rest of the op). While autograd records, lerp_, addcmul_
// and addcdiv_ write the same way and record one node of their own, as PyTorch's
// (LerpBackward0/1, AddcmulBackward0, AddcdivBackward0: autograd/record_inplace.h).
void clamp_(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
            const char* op);
void lerp_(const Tensor& x, const Tensor& end, const Tensor& weight, const char* op);
void addcmul_(const Tensor& x, const Tensor& t1, const Tensor& t2, const Scalar& value,
              const char* op);
void addcdiv_(const Tensor& x, const Tensor& t1, const Tensor& t2, const Scalar& value,
              const char* op);

// NaN -> nan, +inf -> posinf (default: the dtype's largest finite value), -inf -> neginf (its
// lowest); complex input: each part; integral and bool input: a copy.
Tensor nan_to_num(const Tensor& x, double nan, std::optional<double> posinf,
                  std::optional<double> neginf);

// |x - y| <= atol + rtol * |y| elementwise (bool); infinities equal only themselves, NaN equal
// to NaN only with equal_nan. `same_dtype` (other given as a tensor): the dtypes must match
// (RuntimeError, as PyTorch). allclose: isclose everywhere (after broadcasting).
Tensor isclose(const Tensor& x, const Tensor& y, double rtol, double atol, bool equal_nan,
               bool same_dtype);
bool allclose(const Tensor& x, const Tensor& y, double rtol, double atol, bool equal_nan,
              bool same_dtype);

// C's fmod: the remainder with the dividend's sign. An integral zero divisor raises
// ZeroDivisionError (a RuntimeError, as PyTorch).
Tensor fmod(const Tensor& x, const Tensor& y);

// Unary functions of PyTorch (integer and bool inputs of the float ones compute in the default
// float dtype): rsqrt = 1 / sqrt(x); exp2 = 2 ** x; frac = x - trunc(x) (floating x only);
// deg2rad / rad2deg; isposinf / isneginf; sgn (sign for real x with sgn(NaN) = 0, x / |x| for
// complex x, 0 at 0).
Tensor rsqrt(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor frac(const Tensor& x, const char* op = "frac");
Tensor deg2rad(const Tensor& x);
Tensor rad2deg(const Tensor& x);
Tensor isposinf(const Tensor& x);
Tensor isneginf(const Tensor& x);
Tensor sgn(const Tensor& x);
// angle: the argument of complex x; for real x pi where negative, else 0 (NaN kept; float
// result). isreal: True where the imaginary part is 0 (everywhere for real dtypes).
Tensor angle(const Tensor& x);
Tensor isreal(const Tensor& x);

// Binary functions of PyTorch: fmax / fmin ignore NaN (NaN only where both are; ties and a NaN
// `other` give input and its gradient); logaddexp2 = log2(2**x + 2**y); ldexp = x * 2**y;
// heaviside = 0 / values / 1 where x < 0 / == 0 / > 0 (values of x's dtype).
Tensor fmax(const Tensor& x, const Tensor& y);
Tensor fmin(const Tensor& x, const Tensor& y);
Tensor logaddexp2(const Tensor& x, const Tensor& y);
Tensor ldexp(const Tensor& x, const Tensor& y);
Tensor heaviside(const Tensor& x, const Tensor& values, bool same_dtype,
                 const char* op = "heaviside");

}  // namespace ts
