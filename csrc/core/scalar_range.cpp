#include "core/scalar_range.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.h"

namespace ts {

namespace {

// Largest and smallest integers of an integer dtype, as doubles and as exact integers.
struct IntRange {
  long double lo, hi;
};

IntRange int_range(DType d) {
  switch (d) {
    case DType::Int8:
      return {-128.0L, 127.0L};
    case DType::Int16:
      return {-32768.0L, 32767.0L};
    case DType::Int32:
      return {-2147483648.0L, 2147483647.0L};
    case DType::Int64:
      return {-9223372036854775808.0L, 9223372036854775807.0L};
    case DType::UInt8:
      return {0.0L, 255.0L};
    case DType::UInt16:
      return {0.0L, 65535.0L};
    case DType::UInt32:
      return {0.0L, 4294967295.0L};
    default:
      return {0.0L, 18446744073709551615.0L};
  }
}

// x as Python's repr writes a float (the shortest form that reads back: 1e+300, not 300
// digits; 1.5, not 1.500000).
std::string float_text(double x) {
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (std::strtod(buf, nullptr) == x || std::isnan(x)) break;
  }
  return buf;
}

[[noreturn]] void overflow(const Scalar& v, DType d, const char* op) {
  std::string shown;
  switch (v.kind) {
    case ScalarKind::Float:
      shown = float_text(v.d);
      break;
    case ScalarKind::Complex:
      shown = "(" + float_text(v.c.real()) + "+" + float_text(v.c.imag()) + "j)";
      break;
    default:
      shown = v.is_u64 ? std::to_string(v.u) : std::to_string(v.i);
  }
  throw ValueError(
      str(op, ": value ", shown, " cannot be converted to type ", dtype_name(d),
          " without overflow; hint: use a dtype that holds it (e.g. cast the tensor with "
          "x.astype(...), or pass dtype= to full)"));
}

}  // namespace

double float_max(DType d) {
  switch (d) {
    case DType::Float16:
      return 65504.0;
    case DType::BFloat16:
      return 3.3895313892515355e38;
    case DType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// Note [Checked scalar writes]: a Python number written into a tensor must fit its dtype, as
// in PyTorch (NumPy 2 refuses out-of-range integers too): integers within the dtype's range,
// where an unsigned dtype also takes negatives down to -max (they wrap, two's complement);
// floats into integers finite and within range (255.9 does not fit uint8, -0.5 neither); floats
// into 16/32-bit floats within the finite range unless infinite or NaN; complex numbers into real
// dtypes only with a zero imaginary part. bool takes anything. Tensor values are cast without
// checks.
void check_scalar_fits(const Scalar& v, DType d, const char* op) {
  if (is_bool(d) || d == DType::Complex128) return;
  if (v.kind == ScalarKind::Complex) {
    if (!is_complex(d) && v.c.imag() != 0) overflow(v, d, op);
    if (is_complex(d)) {  // complex64: both parts within float32
      const double m = std::numeric_limits<float>::max();
      for (double part : {v.c.real(), v.c.imag()})
        if (std::isfinite(part) && std::fabs(part) > m) overflow(v, d, op);
      return;
    }
    Scalar re = Scalar::from_double(v.c.real());
    return check_scalar_fits(re, d, op);
  }
  if (is_integral(d)) {
    const IntRange r = int_range(d);
    long double x;
    if (v.kind == ScalarKind::Float) {
      if (!std::isfinite(v.d)) overflow(v, d, op);
      x = static_cast<long double>(v.d);  // compared before truncation, as PyTorch does
    } else {
      x = v.is_u64 ? static_cast<long double>(v.u) : static_cast<long double>(v.i);
    }
    const long double lo = is_unsigned_int(d) && v.kind != ScalarKind::Float ? -r.hi : r.lo;
    if (x < lo || x > r.hi) overflow(v, d, op);
    return;
  }
  if (v.kind == ScalarKind::Float && std::isfinite(v.d) && std::fabs(v.d) > float_max(d))
    overflow(v, d, op);
  if (v.kind == ScalarKind::Int && d != DType::Float64 && d != DType::Complex64) {
    const double x = v.is_u64 ? static_cast<double>(v.u) : static_cast<double>(v.i);
    if (std::fabs(x) > float_max(d)) overflow(v, d, op);
  }
}

}  // namespace ts
