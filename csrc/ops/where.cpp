#include "ops/where.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/elementwise.h"

namespace ts {

TS_DEFINE_STUB(WhereKernel, where_stub, "where");

Tensor where(const Tensor& condition, const Tensor& x1, const Tensor& x2) {
  check_same_device("where", x1, x2);
  check_same_device("where", condition, x1);
  const DType dt = result_type(x1, x2);
  const Shape shape = broadcast_shapes(broadcast_shapes(condition.shape(), x1.shape(), "where"),
                                       x2.shape(), "where");
  const Tensor c = astype(condition, DType::Bool, false);
  const Tensor a = astype(x1, dt, false), b = astype(x2, dt, false);
  Device dev = condition.device();
  for (const Tensor* t : {&x1, &x2})
    if (!(t->ndim() == 0 && t->device().is_cpu())) dev = t->device();
  Tensor out = empty_elementwise(shape, dt, dev, {&condition, &x1, &x2});
  if (out.numel() != 0) {
    auto it = ElementwiseIter::make(out, {&c, &a, &b}, "where");
    where_stub.get(dev)(it, itemsize(dt));
  }
  if (autograd::needs_grad({&x1, &x2})) autograd::record_where(c, x1, x2, out);
  return out;
}

}  // namespace ts
