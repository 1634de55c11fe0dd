#include "ops/indexing_scatter.h"

#include <vector>

#include "autograd/function.h"
#include "autograd/record_indexing_scatter.h"
#include "core/shape.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(ScatterReduceKernel, scatter_reduce_stub, "scatter_reduce");

ScatterReduceOp scatter_reduce_op(const std::string& name, const char* op) {
  static const char* const kNames[] = {"sum", "prod", "mean", "amax", "amin"};
  for (int i = 0; i < 5; ++i)
    if (name == kNames[i]) return static_cast<ScatterReduceOp>(i);
  throw RuntimeError(str(op, ": reduce argument must be one of 'sum', 'prod', 'mean', 'amax', ",
                         "'amin', got '", name, "'"));
}

namespace {

// The block of src that `index` (contiguous, of src's rank) addresses, contiguous.
Tensor src_block(const Tensor& src, const Tensor& ic) {
  Tensor s = src.ndim() != ic.ndim() ? reshape(src, ic.shape()) : src;
  for (int64_t d = 0; d < ic.ndim(); ++d) s = slice(s, d, 0, ic.dim(d), 1);
  return clone(s);
}

}  // namespace

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      ScatterReduceOp reduce, bool include_self) {
  const char* op = "scatter_reduce";
  TS_CHECK(src.dtype() == x.dtype(), RuntimeError, op, ": expected self (", dtype_name(x.dtype()),
           ") and src (", dtype_name(src.dtype()), ") to have the same dtype; hint: cast src ",
           "with src.to(self.dtype)");
  TS_CHECK(is_inexact(x.dtype()) || is_integral(x.dtype()), TypeError, op, ": not supported for ",
           dtype_name(x.dtype()), " tensors");
  TS_CHECK(!is_complex(x.dtype()) || reduce == ScatterReduceOp::Sum ||
               reduce == ScatterReduceOp::Mean || reduce == ScatterReduceOp::Prod,
           TypeError, op, ": reduce 'amax'/'amin' is not defined for complex tensors (",
           dtype_name(x.dtype()), ")");
  TS_CHECK(src.ndim() == index.ndim() || (src.ndim() <= 1 && index.ndim() <= 1), ValueError, op,
           ": src ", shape_str(src.shape()), " must have as many dims as index ",
           shape_str(index.shape()));
  TS_CHECK(index.device() == x.device() || index.device().is_cpu(), RuntimeError, op,
           ": index is on ", index.device().str(), " but self on ", x.device().str());
  // The kernel is a host loop (serial: repeated indices combine in order); device tensors go
  // through host copies.
  const Device dev = x.device();
  const Tensor xh = to_device(x, Device{}), sh = to_device(src, Device{});
  Tensor out = clone(xh);
  std::vector<int64_t> off;
  int64_t d = dim;
  const Tensor ic = scatter_offsets(op, out, d, to_device(index, Device{}), &sh, off);
  if (ic.numel() > 0) {
    const Tensor s = src_block(sh, ic);
    scatter_reduce_stub.get(Device{})(out, off.data(), s, reduce, include_self);
  }
  if (!dev.is_cpu()) out = to_device(out, dev);
  if (autograd::needs_grad({&x, &src}))
    autograd::record_scatter_reduce(x, src, out, d, index, static_cast<int>(reduce), include_self);
  return out;
}

}  // namespace ts
