// CPU kernels for abs/sign/square/positive/pow, real/imag, the float predicates and the
// binary real-float functions (atan2, hypot, logaddexp, copysign, nextafter).
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/math.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

template <class A>
constexpr bool is_int_v = std::is_integral_v<A> && !std::is_same_v<A, bool>;

void abs_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "abs", [](auto a) {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return std::abs(a);
    else if constexpr (std::is_unsigned_v<A>)
      return a;
    else if constexpr (std::is_integral_v<A>)
      return a < 0 ? scalar::wrap_neg(a) : a;
    else
      return std::abs(a);
  });
}
void sign_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "sign", [](auto a) {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return scalar::complex_sign(a);
    else if constexpr (std::is_integral_v<A>)
      return A((a > 0) - (a < 0));
    else
      return a > 0 ? A(1) : (a < 0 ? A(-1) : (a == 0 ? A(0) : a));  // NaN stays; -0 -> 0 (NumPy)
  });
}
void square_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "square", [](auto a) {
    if constexpr (is_int_v<decltype(a)>)
      return scalar::wrap_mul(a, a);
    else
      return a * a;
  });
}
void positive_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kNumericSet>(it, dt, "positive", [](auto a) { return a; });
}
void pow_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kNumericSet>(it, dt, "pow", [](auto a, auto b) {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return scalar::complex_pow(a, b);
    else if constexpr (std::is_integral_v<A>)
      return scalar::int_pow(a, b);
    else
      return std::pow(a, b);
  });
}
void real_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kComplexSet>(it, dt, "real", [](auto a) { return a.real(); });
}
void imag_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kComplexSet>(it, dt, "imag", [](auto a) { return a.imag(); });
}

void isfinite_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kAllSet>(it, dt, "isfinite", [](auto a) -> bool {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return std::isfinite(a.real()) && std::isfinite(a.imag());
    else if constexpr (std::is_integral_v<A>)
      return true;
    else
      return std::isfinite(a);
  });
}
void isinf_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kAllSet>(it, dt, "isinf", [](auto a) -> bool {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return std::isinf(a.real()) || std::isinf(a.imag());
    else if constexpr (std::is_integral_v<A>)
      return false;
    else
      return std::isinf(a);
  });
}
void isnan_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kAllSet>(it, dt, "isnan", [](auto a) -> bool {
    using A = decltype(a);
    if constexpr (is_complex_v<A>)
      return std::isnan(a.real()) || std::isnan(a.imag());
    else if constexpr (std::is_integral_v<A>)
      return false;
    else
      return std::isnan(a);
  });
}
void signbit_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kRealSet>(it, dt, "signbit", [](auto a) -> bool {
    using A = decltype(a);
    if constexpr (std::is_unsigned_v<A>)
      return false;
    else if constexpr (std::is_integral_v<A>)
      return a < 0;
    else
      return scalar::sign_bit(a);
  });
}

void atan2_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kFloatSet>(it, dt, "atan2", [](auto a, auto b) { return std::atan2(a, b); });
}
void hypot_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kFloatSet>(it, dt, "hypot", [](auto a, auto b) { return std::hypot(a, b); });
}
void copysign_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kFloatSet>(it, dt, "copysign", [](auto a, auto b) { return std::copysign(a, b); });
}
void logaddexp_kernel(const ElementwiseIter& it, DType dt) {
  run_binary<kFloatSet>(it, dt, "logaddexp",
                        [](auto a, auto b) { return scalar::logaddexp(a, b); });
}

// nextafter steps in the storage type: for float16/bfloat16 one step of 16-bit bits, which
// float32's nextafter would not give.
template <class T>
float nextafter_16(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return b;
  if (a == 0) return static_cast<float>(T::from_bits(scalar::sign_bit(b) ? 0x8001 : 0x0001));
  const uint16_t bits = T(a).x;
  const bool up = (a < b) == (a > 0);  // away from zero
  return static_cast<float>(T::from_bits(static_cast<uint16_t>(up ? bits + 1 : bits - 1)));
}
void nextafter_kernel(const ElementwiseIter& it, DType dt) {
  visit_dtype<kFloatSet>(dt, "nextafter", [&](auto tag) {
    using T = typename decltype(tag)::type;
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      binary_loop<T, T>(p, s, n, [](acc_t<T> a, acc_t<T> b) {
        if constexpr (std::is_same_v<T, acc_t<T>>)
          return std::nextafter(a, b);
        else
          return nextafter_16<T>(a, b);
      });
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(abs_stub, CPU, &abs_kernel);
TS_REGISTER_KERNEL(sign_stub, CPU, &sign_kernel);
TS_REGISTER_KERNEL(square_stub, CPU, &square_kernel);
TS_REGISTER_KERNEL(positive_stub, CPU, &positive_kernel);
TS_REGISTER_KERNEL(pow_stub, CPU, &pow_kernel);
TS_REGISTER_KERNEL(real_stub, CPU, &real_kernel);
TS_REGISTER_KERNEL(imag_stub, CPU, &imag_kernel);
TS_REGISTER_KERNEL(isfinite_stub, CPU, &isfinite_kernel);
TS_REGISTER_KERNEL(isinf_stub, CPU, &isinf_kernel);
TS_REGISTER_KERNEL(isnan_stub, CPU, &isnan_kernel);
TS_REGISTER_KERNEL(signbit_stub, CPU, &signbit_kernel);
TS_REGISTER_KERNEL(atan2_stub, CPU, &atan2_kernel);
TS_REGISTER_KERNEL(hypot_stub, CPU, &hypot_kernel);
TS_REGISTER_KERNEL(copysign_stub, CPU, &copysign_kernel);
TS_REGISTER_KERNEL(logaddexp_stub, CPU, &logaddexp_kernel);
TS_REGISTER_KERNEL(nextafter_stub, CPU, &nextafter_kernel);

}  // namespace ts
