// Scalar: a Python number crossing into C++ (fill values, wrapped operands, item()).
#pragma once
#include <complex>
#include <cstdint>

#include "core/dtype.h"

namespace ts {

struct Scalar {
  ScalarKind kind = ScalarKind::Int;
  int64_t i = 0;
  uint64_t u = 0;  // set for Python ints above INT64_MAX that fit uint64
  bool is_u64 = false;
  double d = 0;
  std::complex<double> c;

  static Scalar from_bool(bool b) {
    Scalar s;
    s.kind = ScalarKind::Bool;
    s.i = b;
    return s;
  }
  static Scalar from_int(int64_t v) {
    Scalar s;
    s.kind = ScalarKind::Int;
    s.i = v;
    return s;
  }
  static Scalar from_uint(uint64_t v) {
    Scalar s;
    s.kind = ScalarKind::Int;
    s.u = v;
    s.is_u64 = true;
    s.i = static_cast<int64_t>(v);
    return s;
  }
  static Scalar from_double(double v) {
    Scalar s;
    s.kind = ScalarKind::Float;
    s.d = v;
    return s;
  }
  static Scalar from_complex(std::complex<double> v) {
    Scalar s;
    s.kind = ScalarKind::Complex;
    s.c = v;
    return s;
  }

  // Converts with C++ cast semantics (integers wrap, like PyTorch).
  template <class T>
  T to() const {
    switch (kind) {
      case ScalarKind::Bool:
      case ScalarKind::Int:
        if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>)
          return T(static_cast<typename T::value_type>(is_u64 ? double(u) : double(i)), 0);
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          return T(static_cast<float>(is_u64 ? double(u) : double(i)));
        else
          return is_u64 ? static_cast<T>(u) : static_cast<T>(i);
      case ScalarKind::Float:
        if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>)
          return T(static_cast<typename T::value_type>(d), 0);
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          return T(static_cast<float>(d));
        else if constexpr (std::is_same_v<T, bool>)
          return d != 0;
        else if constexpr (std::is_integral_v<T>)
          return float_to_int<T>(d);
        else
          return static_cast<T>(d);
      case ScalarKind::Complex:
        if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>)
          return T(static_cast<typename T::value_type>(c.real()),
                   static_cast<typename T::value_type>(c.imag()));
        else if constexpr (std::is_same_v<T, bool>)
          return c != std::complex<double>(0, 0);
        else
          return Scalar::from_double(c.real()).to<T>();
    }
    return T();
  }

 private:
  // Out-of-range float -> int is UB in C++; saturate-to-zero for NaN, wrap through int64.
  template <class T>
  static T float_to_int(double v) {
    if (!(v == v)) return T(0);
    if (v >= 9.2233720368547758e18 || v < -9.2233720368547758e18) return T(0);
    return static_cast<T>(static_cast<int64_t>(v));
  }
};

}  // namespace ts
