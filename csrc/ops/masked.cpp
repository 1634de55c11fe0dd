#include "ops/masked.h"

#include "autograd/record.h"
#include "core/scalar_range.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

namespace {

void check_mask(const Tensor& mask, const char* op) {
  TS_CHECK(is_bool(mask.dtype()), TypeError, op, ": mask must be a bool tensor, got ",
           dtype_name(mask.dtype()), " of shape ", shape_str(mask.shape()),
           "; hint: pass a comparison such as x > 0, or mask.astype(bool)");
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value, const char* op) {
  check_mask(mask, op);
  bool fits = mask.ndim() <= x.ndim();
  for (int64_t i = 1; fits && i <= mask.ndim(); ++i) {
    const int64_t m = mask.dim(mask.ndim() - i), s = x.dim(x.ndim() - i);
    fits = m == 1 || m == s;
  }
  TS_CHECK(fits, ValueError, op, ": mask of shape ", shape_str(mask.shape()),
           " does not broadcast to the input's shape ", shape_str(x.shape()),
           "; hint: the mask may have fewer dims or size-1 dims, but not more or larger");
  TS_CHECK(value.ndim() == 0, ValueError, op,
           ": value must be a number or a 0-d tensor, got shape ", shape_str(value.shape()),
           "; hint: use where(mask, values, x) for a tensor of values");
  // a Python number must fit x's dtype (Note [Checked scalar writes]): 300 into uint8 wrapped
  if (value.is_wrapped_number()) check_scalar_fits(item(value), x.dtype(), op);
  return where(mask, astype_op(value, x.dtype(), false), x);
}

void masked_fill_(const Tensor& x, const Tensor& mask, const Tensor& value, const char* op) {
  autograd::check_inplace(x, op);
  warn_expanded_write(x, op);
  assign_inplace_result(op, x, masked_fill(x, mask, value, op), true);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  check_mask(mask, "masked_select");
  const Shape shape = x.shape() == mask.shape()
                          ? x.shape()
                          : broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  const Tensor xb = x.shape() == shape ? x : broadcast_to(x, shape);
  const Tensor mb = mask.shape() == shape ? mask : broadcast_to(mask, shape);
  const Shape flat{xb.numel()};
  // a 0-d pair selects from its one element (PyTorch gives a 1-d result either way)
  AdvKey key{AdvItem{IndexItem{}, xb.ndim() == 0 ? reshape(mb, flat) : mb}};
  return index_advanced(xb.ndim() == 0 ? reshape(xb, flat) : xb, key);
}

}  // namespace ts
