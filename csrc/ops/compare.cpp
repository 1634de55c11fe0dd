#include "ops/compare.h"

#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/copy.h"

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
// A bound of clip in x's dtype, checked to broadcast to x's shape without growing it.
Tensor clip_bound(const Tensor& x, const Tensor& bound, const char* which) {
  check_same_device("clip", x, bound);
  const Shape s = broadcast_shapes(x.shape(), bound.shape(), "clip");
  TS_CHECK(s == x.shape(), ValueError, "clip: ", which, " of shape ", shape_str(bound.shape()),
           " does not broadcast to x's shape ", shape_str(x.shape()));
  TS_CHECK(!is_complex(bound.dtype()), TypeError, "clip: ", which, " may not be complex");
  return astype(bound, x.dtype(), false);
}
}  // namespace

Tensor clip(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  TS_CHECK(in_set(x.dtype(), kRealSet), TypeError, "clip: not supported for dtype ",
           dtype_name(x.dtype()), " (expected real-valued numeric input)");
  if (!lo && !hi) return clone(x);
  const Tensor l = lo ? clip_bound(x, *lo, "min") : Tensor();
  const Tensor h = hi ? clip_bound(x, *hi, "max") : Tensor();
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
