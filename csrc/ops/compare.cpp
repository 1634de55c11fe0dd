#include "ops/compare.h"

#include <cmath>
#include <limits>

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_ELEMENTWISE(equal, kAllSet, Promote, Bool, "any");
TS_DEFINE_ELEMENTWISE(not_equal, kAllSet, Promote, Bool, "any");
// Ordering is defined on real values only (the standard leaves complex ordering out).
#define TS_ORDERING(op) \
  TS_DEFINE_ELEMENTWISE(op, kRealSet | kBoolSet, Promote, Bool, "real-valued (not complex)")
TS_ORDERING(less);
TS_ORDERING(less_equal);
TS_ORDERING(greater);
TS_ORDERING(greater_equal);
#undef TS_ORDERING
TS_DEFINE_ELEMENTWISE(maximum, kRealSet, Promote, Same, "real-valued numeric");
TS_DEFINE_ELEMENTWISE(minimum, kRealSet, Promote, Same, "real-valued numeric");

namespace {
// The range of an integer dtype: its minimum fits int64, its maximum uint64.
struct IntRange {
  int64_t lo;
  uint64_t hi;
};
IntRange int_range(DType d) {
  const int bits = static_cast<int>(itemsize(d)) * 8;
  if (is_unsigned_int(d)) return {0, bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1};
  return {bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1)),
          (uint64_t(1) << (bits - 1)) - 1};
}
Scalar int_scalar(int64_t v) { return Scalar::from_int(v); }
Scalar uint_scalar(uint64_t v) {
  if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return Scalar::from_int(static_cast<int64_t>(v));
  Scalar s;
  s.kind = ScalarKind::Int;
  s.u = v;
  s.is_u64 = true;
  return s;
}

// Note [Clip bounds outside the dtype]
// clip returns x's dtype, so a bound is cast to it; a bound an integer x's dtype cannot hold
// would wrap (clip(uint8 [0], -1, 5) would clamp to [255, 5] and give 5). Such a bound is
// first clamped to the dtype's range, which is what clamping in exact arithmetic gives:
// clip(uint8 [0], -1, 5) is 0 and clip(int8 [100], max=1000) is 100. Float bounds on integer
// x are clamped in float64 (to the largest doubles inside the range, so the cast is exact)
// and truncated toward zero by the cast; a NaN bound on integer x bounds nothing. The
// standard leaves these cases implementation-defined.
Tensor bound_in_range(const Tensor& bound, DType dt, bool is_lower) {
  const IntRange r = int_range(dt);
  if (is_floating(bound.dtype())) {
    Tensor b = astype(bound, DType::Float64, false);
    double hi = static_cast<double>(r.hi);
    if (static_cast<long double>(hi) > static_cast<long double>(r.hi)) hi = std::nextafter(hi, 0.0);
    const double lo = static_cast<double>(r.lo);  // a power of two or 0: exact
    b = binary_op(maximum_def, b, scalar_tensor(Scalar::from_double(lo), DType::Float64));
    b = binary_op(minimum_def, b, scalar_tensor(Scalar::from_double(hi), DType::Float64));
    const Tensor none = scalar_tensor(Scalar::from_double(is_lower ? lo : hi), DType::Float64);
    return where(unary_op(isnan_def, b), none, b);
  }
  if (!is_integral(bound.dtype())) return bound;  // bool: 0 and 1 fit every integer dtype
  const IntRange br = int_range(bound.dtype());
  Tensor b = bound;
  if (r.lo > br.lo) b = binary_op(maximum_def, b, scalar_tensor(int_scalar(r.lo), b.dtype()));
  if (r.hi < br.hi) b = binary_op(minimum_def, b, scalar_tensor(uint_scalar(r.hi), b.dtype()));
  return b;
}

}  // namespace

Tensor clip_bound(const Tensor& x, const Tensor& bound, const char* which, const char* op) {
  check_same_device(op, x, bound);
  broadcast_shapes(x.shape(), bound.shape(), op);  // the result takes the broadcast shape
  TS_CHECK(!is_complex(bound.dtype()), TypeError, op, ": ", which, " may not be complex");
  if (is_integral(x.dtype()) && bound.dtype() != x.dtype()) {
    autograd::GradModeGuard no_grad(false);
    return astype(bound_in_range(bound, x.dtype(), std::string(which) == "min"), x.dtype(), false);
  }
  return astype(bound, x.dtype(), false);
}

Tensor clip(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
            const char* op) {
  TS_CHECK(in_set(x.dtype(), kRealSet), TypeError, op, ": not supported for dtype ",
           dtype_name(x.dtype()), " (expected real-valued numeric input)");
  if (!lo && !hi) return clone(x);
  const Tensor l = lo ? clip_bound(x, *lo, "min", op) : Tensor();
  const Tensor h = hi ? clip_bound(x, *hi, "max", op) : Tensor();
  Tensor r = x;
  {
    autograd::GradModeGuard no_grad(false);  // recorded below as one node
    if (lo) r = binary_op(maximum_def, r, l);
    if (hi) r = binary_op(minimum_def, r, h);
  }
  autograd::record_clip(x, l, h, r);
  return r;
}

}  // namespace ts
