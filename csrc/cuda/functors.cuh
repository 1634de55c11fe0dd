// Device functors for the elementwise ops. They compute on the compute type (dacc_t) and follow
// the CPU kernels' conventions: integer ops wrap and never trap, NaNs propagate through
// maximum/minimum, floored division and remainder are NumPy's (shared with the CPU through
// kernels/scalar_math.h).
#pragma once
#include <cuda/std/cmath>
#include <cuda/std/complex>

#include "kernels/scalar_math.h"
#include "cuda/device_types.cuh"

namespace ts::cuda::fn {

namespace cs = ::cuda::std;

template <class A>
inline constexpr bool is_int_v = cs::is_integral_v<A> && !cs::is_same_v<A, bool>;

#define TS_UNARY_FN(Name, ...)                                       \
  struct Name {                                                      \
    template <class A>                                               \
    __host__ __device__ __forceinline__ auto operator()(A a) const { \
      __VA_ARGS__                                                    \
    }                                                                \
  };
#define TS_BINARY_FN(Name, ...)                                           \
  struct Name {                                                           \
    template <class A>                                                    \
    __host__ __device__ __forceinline__ auto operator()(A a, A b) const { \
      __VA_ARGS__                                                         \
    }                                                                     \
  };

// Arithmetic.
TS_BINARY_FN(Add, return a + b;)
TS_BINARY_FN(Sub, return a - b;)
TS_BINARY_FN(Mul, if constexpr (cs::is_same_v<A, bool>) return static_cast<bool>(a && b);
             else if constexpr (is_int_v<A>) return scalar::wrap_mul(a, b); else return a * b;)
TS_BINARY_FN(Div, return a / b;)
TS_UNARY_FN(Neg, if constexpr (is_int_v<A>) return scalar::wrap_neg(a); else return A(-a);)
TS_UNARY_FN(Conj, return cs::conj(a);)
TS_UNARY_FN(Positive, return a;)
TS_UNARY_FN(Square, if constexpr (is_int_v<A>) return scalar::wrap_mul(a, a); else return a * a;)
TS_UNARY_FN(Abs, if constexpr (is_dcomplex_v<A>) return cs::abs(a);
            else if constexpr (cs::is_unsigned_v<A>) return a;
            else if constexpr (cs::is_integral_v<A>) return a < 0 ? scalar::wrap_neg(a) : a;
            else return cs::fabs(a);)
TS_UNARY_FN(
    Sign,
    if constexpr (is_dcomplex_v<A>) {
      if (a == A(0)) return A(0);  // +0 + 0j for any signed zero, as on the CPU
      const auto m = cs::abs(a);
      return A(a.real() / m, a.imag() / m);
    } else if constexpr (cs::is_integral_v<A>) return A((a > 0) - (a < 0));
    else return a > 0 ? A(1) : (a < 0 ? A(-1) : (a == 0 ? A(0) : a));)
TS_BINARY_FN(
    Pow,
    if constexpr (is_dcomplex_v<A>) {
      if (b == A(0)) return A(1);
      return cs::pow(a, b);
    } else if constexpr (cs::is_integral_v<A>) return scalar::int_pow(a, b);
    else return cs::pow(a, b);)
TS_UNARY_FN(Real, return a.real();)
TS_UNARY_FN(Imag, return a.imag();)
TS_UNARY_FN(IsFinite,
            if constexpr (is_dcomplex_v<A>) return bool(isfinite(a.real()) && isfinite(a.imag()));
            else if constexpr (cs::is_integral_v<A>) return true; else return bool(isfinite(a));)
TS_UNARY_FN(IsInf, if constexpr (is_dcomplex_v<A>) return bool(isinf(a.real()) || isinf(a.imag()));
            else if constexpr (cs::is_integral_v<A>) return false; else return bool(isinf(a));)
TS_UNARY_FN(IsNan, if constexpr (is_dcomplex_v<A>) return bool(isnan(a.real()) || isnan(a.imag()));
            else if constexpr (cs::is_integral_v<A>) return false; else return bool(isnan(a));)
TS_UNARY_FN(SignBit, if constexpr (cs::is_unsigned_v<A>) return false;
            else if constexpr (cs::is_integral_v<A>) return bool(a < 0);
            else return bool(signbit(a));)
TS_BINARY_FN(Atan2, return cs::atan2(a, b);)
TS_BINARY_FN(Hypot, return cs::hypot(a, b);)
TS_BINARY_FN(CopySign, return cs::copysign(a, b);)
TS_BINARY_FN(LogAddExp, return scalar::logaddexp(a, b);)

// Comparisons, min/max (NaN-propagating), logical and bitwise ops.
TS_BINARY_FN(Eq, return bool(a == b);)
TS_BINARY_FN(Ne, return bool(a != b);)
TS_BINARY_FN(Lt, return bool(a < b);)
TS_BINARY_FN(Le, return bool(a <= b);)
TS_BINARY_FN(Gt, return bool(a > b);)
TS_BINARY_FN(Ge, return bool(a >= b);)
TS_BINARY_FN(Max, return (a > b || a != a) ? a : b;)
TS_BINARY_FN(Min, return (a < b || a != a) ? a : b;)
TS_BINARY_FN(LogicalAnd, return bool(a != A(0) && b != A(0));)
TS_BINARY_FN(LogicalOr, return bool(a != A(0) || b != A(0));)
TS_BINARY_FN(LogicalXor, return bool((a != A(0)) != (b != A(0)));)
TS_UNARY_FN(LogicalNot, return bool(a == A(0));)
TS_BINARY_FN(BitAnd, return A(a & b);)
TS_BINARY_FN(BitOr, return A(a | b);)
TS_BINARY_FN(BitXor, return A(a ^ b);)
TS_UNARY_FN(BitInvert, if constexpr (cs::is_same_v<A, bool>) return !a; else return A(~a);)
TS_BINARY_FN(ShiftLeft, return scalar::shift_left(a, b);)
TS_BINARY_FN(ShiftRight, return scalar::shift_right(a, b);)
TS_BINARY_FN(Gcd, return scalar::gcd(a, b);)
TS_BINARY_FN(Lcm, return scalar::lcm(a, b);)

// Rounding and floored division.
TS_UNARY_FN(Ceil, if constexpr (cs::is_integral_v<A>) return a; else return cs::ceil(a);)
TS_UNARY_FN(Floor, if constexpr (cs::is_integral_v<A>) return a; else return cs::floor(a);)
TS_UNARY_FN(Trunc, if constexpr (cs::is_integral_v<A>) return a; else return cs::trunc(a);)
TS_UNARY_FN(Round, if constexpr (cs::is_integral_v<A>) return a;
            else if constexpr (is_dcomplex_v<A>) return A(cs::nearbyint(a.real()),
                                                          cs::nearbyint(a.imag()));
            else return cs::nearbyint(a);)
TS_BINARY_FN(FloorDiv, if constexpr (cs::is_integral_v<A>) return scalar::int_floor_divide(a, b);
             else return scalar::float_floor_divide(a, b);)
TS_BINARY_FN(Remainder, if constexpr (cs::is_integral_v<A>) return scalar::int_remainder(a, b);
             else return scalar::float_remainder(a, b);)

// Transcendental functions (cuda::std covers real and complex arguments).
#define TS_MATH_FN(Name, f) TS_UNARY_FN(Name, return cs::f(a);)
TS_MATH_FN(Exp, exp)
TS_MATH_FN(Log, log)
TS_MATH_FN(Sqrt, sqrt)
TS_MATH_FN(Sin, sin)
TS_MATH_FN(Cos, cos)
TS_MATH_FN(Tan, tan)
TS_MATH_FN(Asin, asin)
TS_MATH_FN(Acos, acos)
TS_MATH_FN(Atan, atan)
TS_MATH_FN(Sinh, sinh)
TS_MATH_FN(Cosh, cosh)
TS_MATH_FN(Tanh, tanh)
TS_MATH_FN(Asinh, asinh)
TS_MATH_FN(Acosh, acosh)
TS_MATH_FN(Atanh, atanh)
TS_MATH_FN(Log10, log10)
#undef TS_MATH_FN
// The complex forms cuda::std lacks, written as the CPU's (kernels/scalar_math.h): exp's special
// values minus 1 for non-finite input, +0 + 0j for a complex zero.
TS_UNARY_FN(
    Expm1, if constexpr (is_dcomplex_v<A>) {
      using V = typename A::value_type;
      if (!cs::isfinite(a.real()) || !cs::isfinite(a.imag())) {
        const A e = cs::exp(a);
        return A(e.real() - V(1), e.imag());
      }
      if (a.real() == V(0) && a.imag() == V(0)) return A(V(0), a.imag());
      const V s = cs::sin(a.imag() / 2);
      return A(cs::expm1(a.real()) * cs::cos(a.imag()) - 2 * s * s,
               cs::exp(a.real()) * cs::sin(a.imag()));
    } else return cs::expm1(a);)
TS_UNARY_FN(
    Log1p, if constexpr (is_dcomplex_v<A>) {
      using V = typename A::value_type;
      return A(cs::log(cs::hypot(a.real() + V(1), a.imag())), cs::atan2(a.imag(), a.real() + V(1)));
    } else return cs::log1p(a);)
TS_UNARY_FN(
    Log2, if constexpr (is_dcomplex_v<A>) {
      using V = typename A::value_type;
      const A l = cs::log(a);
      const V k = V(1.442695040888963407359924681001892137);
      return A(l.real() * k, l.imag() * k);
    } else return cs::log2(a);)
TS_UNARY_FN(Reciprocal, return A(1) / a;)
TS_UNARY_FN(Identity, return a;)

#undef TS_UNARY_FN
#undef TS_BINARY_FN

}  // namespace ts::cuda::fn
