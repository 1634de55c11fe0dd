// Scalar helpers for the elementwise kernels: NumPy-compatible floored division, integer
// powers and shifts that never trap (no SIGFPE, no signed-overflow UB), complex helpers.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype.h"

// The integer and real helpers below are __host__ __device__ under nvcc, so the CUDA kernels
// compute exactly what the CPU ones do.
#ifdef __CUDACC__
#define TS_HD __host__ __device__
#else
#define TS_HD
#endif

namespace ts::scalar {

// The sign bit through the bits: GCC 12 hits an internal compiler error when it vectorizes
// std::signbit under LTO.
inline bool sign_bit(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u >> 31;
}
inline bool sign_bit(double f) {
  uint64_t u;
  std::memcpy(&u, &f, 8);
  return u >> 63;
}

// Integer ops wrap like NumPy/PyTorch: compute in an unsigned type of at least 32 bits, where
// overflow is defined (uint16 * uint16 would promote to a signed int and overflow).
template <class T>
using wide_unsigned_t = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
// The four wrap_* take any element type: integers (bool aside) go through U, the rest (bool,
// floats, complex, half) use the plain operator.
template <class T>
constexpr bool wraps_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
TS_HD T wrap_add(T a, T b) {
  if constexpr (wraps_v<T>) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
TS_HD T wrap_sub(T a, T b) {
  if constexpr (wraps_v<T>) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T>
TS_HD T wrap_mul(T a, T b) {
  if constexpr (wraps_v<T>) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <class T>
TS_HD T wrap_neg(T a) {
  if constexpr (wraps_v<T>) {
    using U = wide_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U(0) - static_cast<U>(a)));
  } else {
    return T(-a);
  }
}

// Python's a // b for integers (rounds toward -inf). b == 0 gives 0 (NumPy, with no trap);
// MIN // -1 wraps to MIN.
template <class T>
TS_HD T int_floor_divide(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_neg(a);
    const T q = static_cast<T>(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);
  }
}

// Python's a % b for integers (the sign of b). b == 0 gives 0; MIN % -1 is 0.
template <class T>
TS_HD T int_remainder(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    const T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  } else {
    return static_cast<T>(a % b);
  }
}

// Floor division of floats: NumPy's npy_divmod for finite operands (x // 0 -> +-inf/nan,
// exact quotients), and the array API standard's special cases where an operand is infinite
// (Note [Floor division by infinity]).
//
// Note [Floor division by infinity]
// The standard defines a // b as floor(a / b) for infinite operands: +-inf // finite is an
// infinity with the sign of the quotient (NumPy and PyTorch give nan) and finite // +-inf is a
// zero with the sign of the quotient (NumPy, PyTorch and Python give -1 for 3 // -inf). inf //
// inf is nan. remainder keeps Python's rule instead (3 % -inf is -inf), as the standard says,
// so a == b * (a // b) + a % b does not hold across infinities.
template <class F>
TS_HD F float_floor_divide(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (std::isinf(a)) {
    if (std::isinf(b)) return a - a;  // nan
    const bool negative = std::signbit(a) != std::signbit(b);
    return negative ? -std::numeric_limits<F>::infinity() : std::numeric_limits<F>::infinity();
  }
  if (std::isinf(b)) return a / b;  // a signed zero
  if (b == 0) return a / b;
  const F mod = std::fmod(a, b);
  F div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) div -= F(1);
  }
  if (div != 0) {
    F fl = std::floor(div);
    if (div - fl > F(0.5)) fl += F(1);
    return fl;
  }
  return std::copysign(F(0), a / b);
}
template <class F>
TS_HD F float_remainder(F a, F b) {
  F mod = std::fmod(a, b);
  if (b == 0) return mod;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(F(0), b);
  }
  return mod;
}

// a ** b for integers by repeated squaring, wrapping; b >= 0 (the op rejects negatives).
template <class T>
TS_HD T int_pow(T a, T b) {
  using U = wide_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return 0;
  }
  U base = static_cast<U>(a), r = 1;
  for (auto e = static_cast<std::make_unsigned_t<T>>(b); e; e >>= 1) {
    if (e & 1u) r = static_cast<U>(r * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(r);
}

// NumPy's complex power: exact repeated multiplication for small integral real exponents.
template <class V>
std::complex<V> complex_pow(std::complex<V> a, std::complex<V> b) {
  using C = std::complex<V>;
  if (b == C(0)) return C(1);
  if (a == C(0)) {
    if (b.real() > 0) return C(0);
    const V nan = std::numeric_limits<V>::quiet_NaN();
    return C(nan, nan);
  }
  if (b.imag() == 0 && b.real() > -100 && b.real() < 100 && b.real() == std::trunc(b.real())) {
    const long n = static_cast<long>(b.real());
    if (n == 1) return a;
    if (n == 2) return a * a;
    if (n == 3) return a * a * a;
    C r(1), base = a;
    for (long m = n < 0 ? -n : n; m; m >>= 1) {
      if (m & 1) r *= base;
      base *= base;
    }
    return n < 0 ? C(1) / r : r;
  }
  return std::pow(a, b);
}

// Shifts like NumPy: by >= the bit width (or a negative amount) give 0, or -1 for a right
// shift of a negative value.
template <class T>
TS_HD T shift_left(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<uint64_t>(b) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << b));
}
// Greatest common divisor (non-negative) and least common multiple of integers, as torch's
// calc_gcd: |a|, |b| taken in the unsigned type, so the most negative value does not trap;
// lcm(a, 0) is 0 and the product wraps like the other integer ops.
template <class T>
TS_HD T gcd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  U x = static_cast<U>(a), y = static_cast<U>(b);
  if constexpr (std::is_signed_v<T>) {
    if (a < 0) x = static_cast<U>(U(0) - x);
    if (b < 0) y = static_cast<U>(U(0) - y);
  }
  while (x != 0) {
    const U c = x;
    x = static_cast<U>(y % x);
    y = c;
  }
  return static_cast<T>(y);
}
template <class T>
TS_HD T lcm(T a, T b) {
  const T g = gcd(a, b);
  if (g == 0) return 0;
  // torch's abs(a / g * b): the product in C++'s promoted type (int for the 8/16-bit types),
  // wrapping, its absolute value there, then the cast back to T
  using P = std::conditional_t<(sizeof(T) < 4), int32_t, T>;
  using UP = std::make_unsigned_t<P>;
  UP r =
      static_cast<UP>(static_cast<UP>(static_cast<P>(a / g)) * static_cast<UP>(static_cast<P>(b)));
  if constexpr (std::is_signed_v<P>) {
    if (static_cast<P>(r) < 0) r = static_cast<UP>(UP(0) - r);
  }
  return static_cast<T>(r);
}
template <class T>
TS_HD T shift_right(T a, T b) {
  if (static_cast<uint64_t>(b) >= sizeof(T) * 8) {
    if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
    return 0;
  }
  return static_cast<T>(a >> b);
}

// NumPy's logaddexp: exact for equal arguments (including infinities of one sign).
template <class F>
TS_HD F logaddexp(F x, F y) {
  if (x == y) return x + F(0.693147180559945309417232121458176568);
  const F d = x - y;
  if (d > 0) return x + std::log1p(std::exp(-d));
  if (d <= 0) return y + std::log1p(std::exp(d));
  return d;  // NaN
}

// Complex functions the standard library lacks, written as NumPy does.
template <class V>
std::complex<V> complex_expm1(std::complex<V> z) {
  // Non-finite inputs take exp's C99 Annex G special values minus 1 (the array API's expm1
  // table is exactly that); a complex zero gives +0 + 0j (the formula below would give -0).
  if (!std::isfinite(z.real()) || !std::isfinite(z.imag())) {
    const std::complex<V> e = std::exp(z);
    return {e.real() - V(1), e.imag()};
  }
  if (z.real() == 0 && z.imag() == 0) return {V(0), z.imag()};
  const V s = std::sin(z.imag() / 2);
  return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * s * s,
          std::exp(z.real()) * std::sin(z.imag())};
}
// log1p(z) = log|1 + z| + i arg(1 + z). Near 0, |1 + z|^2 - 1 = x(2 + x) + y^2 goes through
// log1p to keep its digits; far out, |1 + z| is split as m * sqrt(1 + (n/m)^2) so it does not
// overflow where the logarithm is finite (log1p(1e308 + 1e308j) is 709.8 + 0.785j, as torch's).
template <class V>
std::complex<V> complex_log1p(std::complex<V> z) {
  const V x = z.real(), y = z.imag(), a = x + 1;
  const V im = std::atan2(y, a);
  if (!std::isfinite(x) || !std::isfinite(y)) return {std::log(std::hypot(a, y)), im};
  if (std::abs(x) < V(0.5) && std::abs(y) < V(0.5)) return {std::log1p(x * (2 + x) + y * y) / 2, im};
  const V m = std::max(std::abs(a), std::abs(y)), n = std::min(std::abs(a), std::abs(y));
  if (m == 0) return {std::log(m), im};
  const V r = n / m;
  return {std::log(m) + std::log1p(r * r) / 2, im};
}
template <class V>
std::complex<V> complex_log2(std::complex<V> z) {
  const std::complex<V> l = std::log(z);
  const V k = V(1.442695040888963407359924681001892137);
  return {l.real() * k, l.imag() * k};
}

// sign of a complex number: z / |z|, and +0 + 0j for any signed zero (the array API's table).
template <class V>
std::complex<V> complex_sign(std::complex<V> z) {
  if (z == std::complex<V>(0)) return {V(0), V(0)};
  const V m = std::abs(z);
  return {z.real() / m, z.imag() / m};
}

}  // namespace ts::scalar
