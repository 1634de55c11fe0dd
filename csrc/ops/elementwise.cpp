#include "ops/elementwise.h"

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "autograd/view_writes.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/indexing_basic.h"
#include "ops/memory_format.h"
#include "ops/out_arg.h"
#include "ops/reduce.h"
#include "ops/tensor_convert.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

DType result_type(const Tensor& a, const Tensor& b) {
  const bool wa = a.is_wrapped_number(), wb = b.is_wrapped_number();
  if (wa && !wb) return promote_with_scalar(b.dtype(), scalar_kind(a.dtype()));
  if (wb && !wa) return promote_with_scalar(a.dtype(), scalar_kind(b.dtype()));
  if (wa && wb) {
    const auto k = std::max(scalar_kind(a.dtype()), scalar_kind(b.dtype()));
    return default_dtype_for(k);
  }
  return promote_types(a.dtype(), b.dtype());
}

DType compute_dtype(const ElementwiseDef& def, DType promoted, DType a, DType b, const char* op) {
  DType c = promoted;
  if (def.in == InRule::IntToFloat && !is_inexact(c)) c = kDefaultFloat;
  if (!in_set(c, def.allowed)) {
    if (!op) op = def.name;
    if (a == b)
      throw TypeError(str(op, ": not supported for dtype ", dtype_name(a), " (expected ",
                          def.allowed_desc, " input)"));
    throw TypeError(str(op, ": not supported for dtypes ", dtype_name(a), " and ", dtype_name(b),
                        " (promoted to ", dtype_name(promoted), "; expected ", def.allowed_desc,
                        " inputs)"));
  }
  return c;
}

DType output_dtype(const ElementwiseDef& def, DType compute) {
  switch (def.out) {
    case OutRule::Bool:
      return DType::Bool;
    case OutRule::Real:
      return to_real(compute);
    default:
      return compute;
  }
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return;
  // Python scalars and 0-d CPU tensors mix freely with any device (PyTorch's rule).
  if ((a.ndim() == 0 && a.device().is_cpu()) || (b.ndim() == 0 && b.device().is_cpu())) return;
  throw RuntimeError(str(op, ": expected all tensors on the same device, got ", a.device().str(),
                         " and ", b.device().str()));
}

Tensor empty_elementwise(const Shape& shape, DType dtype, Device device,
                         std::initializer_list<const Tensor*> inputs) {
  const Strides st = output_strides(shape, inputs);
  if (st.empty()) return Tensor::empty(shape, dtype, device);
  return fresh_strided(Tensor::empty(Shape{numel_of(shape)}, dtype, device), shape, st);
}

Tensor unary_op(const ElementwiseDef& def, const Tensor& x, const char* op) {
  // The table's policy for def.name, if any (Note [Autocast inside the ops]).
  if (autocast::active()) {
    if (const std::optional<uint8_t> policy = autocast::find_policy(def.name)) {
      Tensor xc = x;
      const autocast::OpScope scope(*policy, xc);
      return unary_op(def, xc, op);
    }
  }
  const DType c = compute_dtype(def, x.dtype(), x.dtype(), x.dtype(), op);
  const Tensor xc = astype(x, c, /*copy=*/false);
  Tensor out = empty_elementwise(x.shape(), output_dtype(def, c), x.device(), {&x});
  if (out.numel() != 0) {
    auto it = ElementwiseIter::make(out, {&xc}, def.name);
    def.stub->get(x.device())(it, c);
  }
  if (autograd::needs_grad({&x})) autograd::record_elementwise(def, {x}, {xc}, out);
  return out;
}

void check_integer_divisor(const Tensor& b, const char* op) {
  if (!b.device().is_cpu() || b.numel() == 0) return;
  autograd::GradModeGuard no_grad(false);
  const bool zero =
      b.numel() == 1
          ? item(b).to<int64_t>() == 0
          : item(any(binary_op(equal_def, b, wrap_scalar(Scalar::from_int(0))), std::nullopt, false))
                .to<bool>();
  if (zero)
    throw ZeroDivisionError(str(op, ": ZeroDivisionError (integer division by zero, divisor of ",
                                dtype_name(b.dtype()), " shape ", shape_str(b.shape()),
                                "); hint: mask the zero divisors or divide in a floating dtype"));
}

Tensor binary_op(const ElementwiseDef& def, const Tensor& a, const Tensor& b, const char* op) {
  if (!op) op = def.name;
  check_same_device(op, a, b);
  const DType c = compute_dtype(def, result_type(a, b), a.dtype(), b.dtype(), op);
  const Shape shape =
      a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), op);
  if (def.checks_int_divisor && !is_inexact(c) && numel_of(shape) != 0)
    check_integer_divisor(b, op);
  const Tensor ac = astype(a, c, false), bc = astype(b, c, false);
  const Device dev = a.ndim() == 0 && a.device().is_cpu() ? b.device() : a.device();
  Tensor out = empty_elementwise(shape, output_dtype(def, c), dev, {&a, &b});
  if (out.numel() != 0) {
    auto it = ElementwiseIter::make(out, {&ac, &bc}, def.name);
    def.stub->get(dev)(it, c);
  }
  if (autograd::needs_grad({&a, &b})) autograd::record_elementwise(def, {a, b}, {ac, bc}, out);
  return out;
}

namespace {
// r written into an expanded a (index_put_, masked_fill_, index_fill_) as PyTorch's kernels do,
// through a's strides: a memory location shared by several elements ends with the value of the
// last of them (in C order) the op changed, or keeps its value when none changed. `base` is a
// with each shared dim cut to one element, so every location appears in it once.
void write_expanded(const Tensor& a, const Tensor& r) {
  std::vector<int64_t> shared;
  Tensor base = a;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (a.dim(d) > 1 && a.strides()[d] == 0) {
      shared.push_back(d);
      base = slice(base, d, 0, 1, 1);
    }
  const Tensor changed = binary_op(not_equal_def, r, a, "copy_");
  Tensor v = clone(base);
  std::vector<int64_t> at(shared.size(), 0);
  for (bool more = true; more;) {
    Tensor ri = r, ci = changed;
    for (size_t j = 0; j < shared.size(); ++j) {
      ri = slice(ri, shared[j], at[j], at[j] + 1, 1);
      ci = slice(ci, shared[j], at[j], at[j] + 1, 1);
    }
    v = where(ci, ri, v);
    more = false;  // the next alias in C order
    for (size_t j = shared.size(); j-- > 0;) {
      if (++at[j] < a.dim(shared[j])) {
        more = true;
        break;
      }
      at[j] = 0;
    }
  }
  copy_(base, v);
}
}  // namespace

void assign_inplace_result(const char* op, const Tensor& a, const Tensor& r, bool expanded_ok) {
  if (!expanded_ok) check_no_internal_overlap(a, op);
  if (expanded_ok && has_internal_overlap(a) && r.dtype() == a.dtype() && r.shape() == a.shape() &&
      r.device() == a.device() && !autograd::needs_grad({&a, &r})) {
    write_expanded(a, r);
    return;
  }
  const DType rd = r.dtype(), ad = a.dtype();
  if (!torch_can_cast(rd, ad))
    throw TypeError(str(op, ": result type ", dtype_name(rd),
                        " can't be cast to the desired output type ", dtype_name(ad),
                        "; hint: an in-place op keeps self's dtype: use the out-of-place op "
                        "or cast self first"));
  if (r.shape() != a.shape())
    throw ValueError(str(op, ": output with shape ", shape_str(a.shape()),
                         " doesn't match the broadcast shape ", shape_str(r.shape()),
                         "; hint: an in-place op cannot grow self: use the out-of-place op"));
  if (r.device() != a.device()) {
    assign_inplace_result(op, a, to_device_op(r, a.device(), false, op), expanded_ok);
    return;
  }
  if (autograd::grad_enabled() && !autograd::requires_grad(r) && autograd::requires_grad(a)) {
    overwrite_inplace(op, a, r);  // the new values do not depend on a's history
    return;
  }
  autograd::rebase_history(a, r, op);
  copy_(a, r);
}

void overwrite_inplace(const char* op, const Tensor& a, const Tensor& r) {
  if (!autograd::grad_enabled() || !autograd::needs_grad({&a, &r})) {
    copy_(a, r);
    return;
  }
  // recorded as a[...] = r: r gets the gradient, the overwritten values none
  autograd::check_view_write(a, autograd::requires_grad(r), op);
  IndexKey all;
  all.push_back(IndexItem{IndexItem::Ellipsis});
  index_put_basic(a, all, r);
}

Tensor inplace_source(const Tensor& a, std::initializer_list<const Tensor*> others) {
  if (!autograd::grad_enabled()) return a;
  bool record = autograd::requires_grad(a);
  for (const Tensor* t : others) record = record || (t->defined() && autograd::requires_grad(*t));
  return record ? clone_op(a) : a;
}

namespace {
// Contiguous, or dense in another dim order (transposed, channels-last): each element once.
bool dense(const Tensor& a) { return a.is_contiguous() || is_non_overlapping_and_dense(a); }
}  // namespace

// Note [In-place without a temporary]: when nothing is recorded, a is dense (in any dim order),
// the op computes in a's dtype and keeps a's shape, and b does not overlap a (or is a itself), the
// kernel writes straight into a (out and first operand alias element by element, which every
// elementwise kernel allows). Otherwise the result is computed out of place and copied in
// (PyTorch's in-place rules: assign_inplace_result). x += y, optimizer updates and gradient
// accumulation take the direct path: one pass over memory instead of three.
void binary_op_(const ElementwiseDef& def, const Tensor& a, const Tensor& b, const char* op) {
  if (!op) op = def.name;
  autograd::check_inplace(a, op);
  if (a.numel() != 0 && dense(a) && !a.storage()->readonly &&
      (b.device() == a.device() || (b.ndim() == 0 && b.device().is_cpu())) &&
      !autograd::needs_grad({&a, &b})) {
    const DType c = compute_dtype(def, result_type(a, b), a.dtype(), b.dtype(), op);
    if (def.checks_int_divisor && !is_inexact(c)) check_integer_divisor(b, op);
    if (c == a.dtype() && output_dtype(def, c) == c &&
        (a.shape() == b.shape() || broadcast_shapes(a.shape(), b.shape(), op) == a.shape())) {
      const Tensor bc = astype(b, c, false);
      if (!may_overlap(a, bc) || (bc.shape() == a.shape() && same_layout(a, bc))) {
        auto it = ElementwiseIter::make(a, {&a, &bc}, def.name);
        def.stub->get(a.device())(it, c);
        a.bump_version();
        return;
      }
    }
  }
  assign_inplace_result(op, a, binary_op(def, a, b, op));
}

// The unary form of the same rule: the kernel reads and writes a element by element.
void unary_op_(const ElementwiseDef& def, const Tensor& a, const char* op) {
  if (!op) op = def.name;
  autograd::check_inplace(a, op);
  if (a.numel() != 0 && dense(a) && !a.storage()->readonly && !autocast::active() &&
      !autograd::needs_grad({&a})) {
    const DType c = compute_dtype(def, a.dtype(), a.dtype(), a.dtype(), op);
    if (c == a.dtype() && output_dtype(def, c) == c) {
      auto it = ElementwiseIter::make(a, {&a}, op);
      def.stub->get(a.device())(it, c);
      a.bump_version();
      return;
    }
  }
  assign_inplace_result(op, a, unary_op(def, a, op));
}

}  // namespace ts
