// dtypes, the promotion table, weak Python scalars, and the dtype dispatch helpers.
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

#include "core/error.h"
#include "core/half.h"

namespace ts {

enum class DType : uint8_t {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
  Complex128
};
constexpr int kNumDTypes = 15;

using c64 = std::complex<float>;
using c128 = std::complex<double>;

const char* dtype_name(DType d);
int64_t itemsize(DType d);

inline bool is_bool(DType d) { return d == DType::Bool; }
inline bool is_signed_int(DType d) { return d >= DType::Int8 && d <= DType::Int64; }
inline bool is_unsigned_int(DType d) { return d >= DType::UInt8 && d <= DType::UInt64; }
inline bool is_integral(DType d) { return is_signed_int(d) || is_unsigned_int(d); }
inline bool is_floating(DType d) { return d >= DType::Float16 && d <= DType::Float64; }
inline bool is_complex(DType d) { return d == DType::Complex64 || d == DType::Complex128; }
inline bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }

constexpr DType kDefaultFloat = DType::Float32;
constexpr DType kDefaultInt = DType::Int64;
constexpr DType kDefaultComplex = DType::Complex64;

// Note [Type promotion]: the array API standard's table for same-kind pairs (int8+uint8 ->
// int16, float32+float64 -> float64, ...); mixed int/float gives the float operand's dtype
// (PyTorch); float16+bfloat16 -> float32 (PyTorch); uint64 with a signed int -> float64
// (NumPy; the standard leaves it open); float+complex -> complex of the wider precision.
DType promote_types(DType a, DType b);

// Kinds of Python scalars, which are weak: they take the tensor's dtype where the kinds allow.
enum class ScalarKind : uint8_t { Bool, Int, Float, Complex };
DType promote_with_scalar(DType tensor, ScalarKind k);
DType default_dtype_for(ScalarKind k);  // dtype a lone Python scalar becomes
ScalarKind scalar_kind(DType d);

// The real dtype of a complex one (complex64 -> float32); identity otherwise.
DType to_real(DType d);
DType to_complex(DType d);            // float32 -> complex64, float64 -> complex128, ...
bool can_cast(DType from, DType to);  // "safe" casting per the standard's promotion lattice

// ---- C++ types <-> DType
template <class T>
struct dtype_of;
#define TS_DTYPE_OF(T, D)                    \
  template <>                                \
  struct dtype_of<T> {                       \
    static constexpr DType value = DType::D; \
  };
TS_DTYPE_OF(bool, Bool)
TS_DTYPE_OF(int8_t, Int8)
TS_DTYPE_OF(int16_t, Int16) TS_DTYPE_OF(int32_t, Int32) TS_DTYPE_OF(int64_t, Int64)
    TS_DTYPE_OF(uint8_t, UInt8) TS_DTYPE_OF(uint16_t, UInt16) TS_DTYPE_OF(uint32_t, UInt32)
        TS_DTYPE_OF(uint64_t, UInt64) TS_DTYPE_OF(Half, Float16) TS_DTYPE_OF(BFloat16, BFloat16)
            TS_DTYPE_OF(float, Float32) TS_DTYPE_OF(double, Float64) TS_DTYPE_OF(c64, Complex64)
                TS_DTYPE_OF(c128, Complex128)
#undef TS_DTYPE_OF

template <class T>
struct Tag {
  using type = T;
};

// ---- dtype dispatch: calls f(Tag<T>{}) for the C++ type of `d`, over a chosen set.
// Sets keep template instantiation counts down: pick the smallest set an op supports.
enum DTypeSet : uint32_t {
  kBoolSet = 1u << 0,
  kSignedSet = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4),
  kUnsignedSet = (1u << 5) | (1u << 6) | (1u << 7) | (1u << 8),
  kIntSet = kSignedSet | kUnsignedSet,
  kHalfSet = (1u << 9) | (1u << 10),
  kFloatSet = kHalfSet | (1u << 11) | (1u << 12),
  kComplexSet = (1u << 13) | (1u << 14),
  kRealSet = kIntSet | kFloatSet,
  kNumericSet = kRealSet | kComplexSet,
  kAllSet = kNumericSet | kBoolSet,
  kInexactSet = kFloatSet | kComplexSet,
};
inline bool in_set(DType d, uint32_t set) { return (set >> static_cast<int>(d)) & 1u; }

[[noreturn]] void throw_unsupported_dtype(const char* op, DType d);

template <uint32_t Set, class F>
decltype(auto) visit_dtype(DType d, const char* op, F&& f) {
#define TS_CASE(D, T)                                                           \
  case DType::D:                                                                \
    if constexpr ((Set >> static_cast<int>(DType::D)) & 1u) return f(Tag<T>{}); \
    break;
  switch (d) {
    TS_CASE(Bool, bool)
    TS_CASE(Int8, int8_t)
    TS_CASE(Int16, int16_t) TS_CASE(Int32, int32_t) TS_CASE(Int64, int64_t) TS_CASE(UInt8, uint8_t)
        TS_CASE(UInt16, uint16_t) TS_CASE(UInt32, uint32_t) TS_CASE(UInt64, uint64_t)
            TS_CASE(Float16, Half) TS_CASE(BFloat16, BFloat16) TS_CASE(Float32, float)
                TS_CASE(Float64, double) TS_CASE(Complex64, c64) TS_CASE(Complex128, c128)
  }
#undef TS_CASE
  throw_unsupported_dtype(op, d);
}

}  // namespace ts
