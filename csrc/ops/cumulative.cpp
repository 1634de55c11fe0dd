#include "ops/cumulative.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/manipulation.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(ScanKernel, cumsum_stub, "cumulative_sum");
TS_DEFINE_STUB(ScanKernel, cumprod_stub, "cumulative_prod");

namespace {

Tensor scan(const char* op, KernelStub<ScanKernel>& stub, const Tensor& x,
            std::optional<int64_t> axis, bool include_initial) {
  TS_CHECK(x.ndim() >= 1, ValueError, op, ": expected a tensor with at least one dimension, got a ",
           "0-d tensor; hint: reshape it to (1,)");
  TS_CHECK(axis || x.ndim() == 1, ValueError, op, ": axis must be given for a tensor of shape ",
           shape_str(x.shape()), " (only 1-D input may omit it)");
  const int64_t ax = axis ? normalize_axis(*axis, x.ndim(), op) : 0;
  Shape oshape = x.shape();
  oshape[ax] += include_initial ? 1 : 0;
  Tensor out = Tensor::empty(oshape, sum_dtype(x.dtype()), x.device());
  if (out.numel() == 0) return out;
  const Tensor xc = contiguous(x);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= x.dim(d);
  for (int64_t d = ax + 1; d < x.ndim(); ++d) inner *= x.dim(d);
  ScanArgs a{xc.data_ptr(), out.data_ptr(), outer, x.dim(ax), inner, include_initial};
  stub.get(x.device())(a, x.dtype());
  return out;
}

Tensor scan_dtype(const char* op, KernelStub<ScanKernel>& stub, const Tensor& x,
                  std::optional<int64_t> axis, std::optional<DType> dtype, bool include_initial) {
  if (!dtype || *dtype == sum_dtype(x.dtype())) return scan(op, stub, x, axis, include_initial);
  return astype(scan(op, stub, astype(x, *dtype, false), axis, include_initial), *dtype, false);
}

// x concatenated with prepend before and append after along axis.
Tensor with_ends(const Tensor& x, int64_t axis, const Tensor* prepend, const Tensor* append) {
  const Tensor* parts[3] = {prepend, &x, append};
  Tensor fitted[3];
  DType dt = x.dtype();
  for (int i = 0; i < 3; ++i) {
    if (!parts[i]) continue;
    Tensor t = *parts[i];
    if (i != 1 && t.ndim() == 0) {
      // A scalar (0-d CPU) end joins a device x like a scalar operand would.
      if (t.device() != x.device()) t = to_device(t, x.device(), false);
      Shape s = x.shape();
      s[axis] = 1;
      t = broadcast_to(t, s);
    }
    TS_CHECK(t.ndim() == x.ndim(), ValueError, "diff: ", i == 0 ? "prepend" : "append",
             " of shape ", shape_str(t.shape()), " must have as many dimensions as x of shape ",
             shape_str(x.shape()));
    for (int64_t d = 0; d < x.ndim(); ++d)
      TS_CHECK(d == axis || t.dim(d) == x.dim(d), ValueError,
               "diff: ", i == 0 ? "prepend" : "append", " of shape ", shape_str(t.shape()),
               " does not match x of shape ", shape_str(x.shape()), " outside axis ", axis);
    if (i != 1)  // Python numbers are weak (Note [Type promotion])
      dt = parts[i]->is_wrapped_number() ? promote_with_scalar(dt, scalar_kind(t.dtype()))
                                         : promote_types(dt, t.dtype());
    fitted[i] = t;
  }
  std::vector<Tensor> parts_cast;  // concat records the join for autograd
  for (int i = 0; i < 3; ++i)
    if (fitted[i].defined()) parts_cast.push_back(astype(fitted[i], dt, false));
  return concat(parts_cast, axis);
}

}  // namespace

Tensor cumulative_sum(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                      bool include_initial) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor xc = x;
    const autocast::OpScope scope(
        dtype ? TS_AUTOCAST_POLICY_DTYPE("cumsum") : TS_AUTOCAST_POLICY("cumsum"), xc);
    return cumulative_sum(xc, axis, dtype, include_initial);
  }
  Tensor out = scan_dtype("cumulative_sum", cumsum_stub, x, axis, dtype, include_initial);
  if (autograd::needs_grad({&x}))
    autograd::record_cumsum(x, out, axis ? normalize_axis(*axis, x.ndim(), "cumulative_sum") : 0,
                            include_initial);
  return out;
}
Tensor cumulative_prod(const Tensor& x, std::optional<int64_t> axis, std::optional<DType> dtype,
                       bool include_initial) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor xc = x;
    const autocast::OpScope scope(
        dtype ? TS_AUTOCAST_POLICY_DTYPE("cumprod") : TS_AUTOCAST_POLICY("cumprod"), xc);
    return cumulative_prod(xc, axis, dtype, include_initial);
  }
  Tensor out = scan_dtype("cumulative_prod", cumprod_stub, x, axis, dtype, include_initial);
  if (autograd::needs_grad({&x}))
    autograd::record_cumprod(x, out, axis ? normalize_axis(*axis, x.ndim(), "cumulative_prod") : 0,
                             include_initial);
  return out;
}

Tensor diff(const Tensor& x, int64_t axis, int64_t n, const Tensor* prepend, const Tensor* append) {
  TS_CHECK(x.ndim() >= 1, ValueError, "diff: expected a tensor with at least one dimension, ",
           "got a 0-d tensor");
  TS_CHECK(n >= 0, ValueError, "diff: order n must be non-negative, got ", n);
  const int64_t ax = normalize_axis(axis, x.ndim(), "diff");
  if (n == 0) return x;  // NumPy ignores prepend/append then
  Tensor r = prepend || append ? with_ends(x, ax, prepend, append) : x;
  for (int64_t k = 0; k < n && r.dim(ax) > 0; ++k) {
    const int64_t len = r.dim(ax);
    const Tensor hi = slice(r, ax, 1, len, 1), lo = slice(r, ax, 0, len - 1, 1);
    if (is_bool(r.dtype()))  // booleans differ where they are not equal (NumPy)
      r = astype(subtract(astype(hi, DType::Int8), astype(lo, DType::Int8)), DType::Bool);
    else
      r = subtract(hi, lo);
  }
  return r;
}

}  // namespace ts
