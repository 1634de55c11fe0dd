#include "core/dtype.h"

namespace ts {

const char* dtype_name(DType d) {
  static const char* names[kNumDTypes] = {
      "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
      "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
  return names[static_cast<int>(d)];
}

int64_t itemsize(DType d) {
  static const int8_t sizes[kNumDTypes] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8, 16};
  return sizes[static_cast<int>(d)];
}

void throw_unsupported_dtype(const char* op, DType d) {
  throw TypeError(str(op, ": not supported for dtype ", dtype_name(d)));
}

namespace {
// Bits of precision a real dtype carries, for picking the wider of two.
int float_rank(DType d) {
  switch (d) {
    case DType::Float16:
      return 1;
    case DType::BFloat16:
      return 1;
    case DType::Float32:
    case DType::Complex64:
      return 2;
    case DType::Float64:
    case DType::Complex128:
      return 3;
    default:
      return 0;
  }
}
int int_bits(DType d) { return static_cast<int>(itemsize(d)) * 8; }
DType signed_of_bits(int bits) {
  switch (bits) {
    case 8:
      return DType::Int8;
    case 16:
      return DType::Int16;
    case 32:
      return DType::Int32;
    default:
      return DType::Int64;
  }
}

DType promote_slow(DType a, DType b) {
  if (a == b) return a;
  if (is_bool(a)) return b;
  if (is_bool(b)) return a;
  if (is_complex(a) || is_complex(b)) {
    const int r = std::max(float_rank(a), float_rank(b));
    return r <= 2 ? DType::Complex64 : DType::Complex128;
  }
  if (is_floating(a) && is_floating(b)) {
    if ((a == DType::Float16 && b == DType::BFloat16) ||
        (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return float_rank(a) >= float_rank(b) ? a : b;
  }
  if (is_floating(a)) return a;  // mixed int/float: the float operand's dtype (PyTorch)
  if (is_floating(b)) return b;
  // both integers
  if (is_signed_int(a) == is_signed_int(b)) return int_bits(a) >= int_bits(b) ? a : b;
  const DType s = is_signed_int(a) ? a : b, u = is_signed_int(a) ? b : a;
  if (int_bits(s) > int_bits(u)) return s;
  if (u == DType::UInt64) return DType::Float64;  // NumPy's choice; the standard leaves it open
  return signed_of_bits(int_bits(u) * 2);
}

struct PromotionTable {
  DType t[kNumDTypes][kNumDTypes];
  PromotionTable() {
    for (int i = 0; i < kNumDTypes; ++i)
      for (int j = 0; j < kNumDTypes; ++j)
        t[i][j] = promote_slow(static_cast<DType>(i), static_cast<DType>(j));
  }
};
const PromotionTable kTable;
}  // namespace

DType promote_types(DType a, DType b) { return kTable.t[static_cast<int>(a)][static_cast<int>(b)]; }

ScalarKind scalar_kind(DType d) {
  if (is_bool(d)) return ScalarKind::Bool;
  if (is_integral(d)) return ScalarKind::Int;
  if (is_floating(d)) return ScalarKind::Float;
  return ScalarKind::Complex;
}

DType default_dtype_for(ScalarKind k) {
  switch (k) {
    case ScalarKind::Bool:
      return DType::Bool;
    case ScalarKind::Int:
      return kDefaultInt;
    case ScalarKind::Float:
      return kDefaultFloat;
    default:
      return kDefaultComplex;
  }
}

DType promote_with_scalar(DType t, ScalarKind k) {
  switch (k) {
    case ScalarKind::Bool:
      return t;
    case ScalarKind::Int:
      return is_bool(t) ? kDefaultInt : t;
    case ScalarKind::Float:
      return is_inexact(t) ? t : kDefaultFloat;
    case ScalarKind::Complex:
      if (is_complex(t)) return t;
      return t == DType::Float64 ? DType::Complex128 : kDefaultComplex;
  }
  return t;
}

DType to_real(DType d) {
  if (d == DType::Complex64) return DType::Float32;
  if (d == DType::Complex128) return DType::Float64;
  return d;
}

DType to_complex(DType d) {
  if (is_complex(d)) return d;
  return d == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

bool can_cast(DType from, DType to) {
  if (from == to) return true;
  if (is_bool(from)) return true;
  if (is_bool(to)) return false;
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_inexact(from) && !is_inexact(to)) return false;
  if (is_integral(from) && is_inexact(to)) {
    // NumPy's "safe" rule: the float's mantissa must hold every value of the integer type.
    const int bits = int_bits(from), r = float_rank(to);
    return bits <= 8 ? r >= 1 : bits <= 16 ? r >= 2 : r >= 3;
  }
  return promote_slow(from, to) == to;
}

}  // namespace ts
