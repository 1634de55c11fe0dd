// Value conversion between any two element types (C++ cast semantics; complex -> real keeps
// the real part; the 16-bit floats go through float).
#pragma once
#include <type_traits>

#include "core/dtype.h"

namespace ts {

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
    if constexpr (std::is_same_v<S, double>)  // one rounding, not two (double -> half directly)
      return D(static_cast<float>(v));
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
