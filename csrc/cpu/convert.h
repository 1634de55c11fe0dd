// Value conversion between any two element types (C++ cast semantics; complex -> real keeps
// the real part; the 16-bit floats go through float).
#pragma once
#include <cmath>
#include <type_traits>

#include "core/dtype.h"

namespace ts {

// double -> float rounded to odd: exact values stay, inexact ones get the neighbour whose last
// bit is 1. A second rounding to a format at least two bits narrower (float16) is then the
// correctly rounded result of the first value: float64 -> float16 rounds once, like NumPy
// (rounding to nearest twice turns 65519.99999 into inf instead of 65504).
inline float to_float_round_odd(double v) {
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isnan(v) || std::isinf(f)) return f;
  uint32_t u = f32_bits(f);
  if ((u & 1u) == 0) u += std::fabs(static_cast<double>(f)) < std::fabs(v) ? 1 : -1;
  return bits_f32(u);
}

template <class T>
struct is_complex_t : std::false_type {};
template <class T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T>
constexpr bool is_complex_v = is_complex_t<T>::value;

template <class D, class S>
inline D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return convert<D, float>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, Half> || std::is_same_v<D, BFloat16>) {
    if constexpr (std::is_same_v<S, double> && std::is_same_v<D, Half>)
      return D(to_float_round_odd(v));  // one rounding, like NumPy
    else if constexpr (std::is_same_v<S, double>)
      return D(static_cast<float>(v));  // bfloat16 via float, like ml_dtypes and PyTorch
    else
      return D(convert<float, S>(v));
  } else if constexpr (is_complex_v<S>) {
    if constexpr (is_complex_v<D>)
      return D(static_cast<typename D::value_type>(v.real()),
               static_cast<typename D::value_type>(v.imag()));
    else if constexpr (std::is_same_v<D, bool>)
      return v.real() != 0 || v.imag() != 0;
    else
      return convert<D, typename S::value_type>(v.real());
  } else if constexpr (is_complex_v<D>) {
    return D(static_cast<typename D::value_type>(v), 0);
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace ts
