#include "ops/out_arg.h"

#include <algorithm>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "core/checked_math.h"
#include "core/error.h"
#include "core/warning.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/memory_format.h"
#include "ops/views.h"

namespace ts {

// Note [out= rules]: as PyTorch 2.13 (checked against it by tests/core/test_out_argument.py):
// - autograd: with grad mode on, an input or out that requires grad is a RuntimeError.
// - device: out on another device than the result is a RuntimeError.
// - dtype: elementwise ops (and cat) cast the result into out when PyTorch's canCast allows
//   (float into float64 or complex, int64 into int8, bool into anything), else "result type
//   Float can't be cast to the desired output type Long"; most other ops want out in the
//   result's dtype exactly. Reductions that take dtype= compute in out's dtype (the callers).
// - shape: an out of another shape is resized (resize_output), with PyTorch's deprecation
//   UserWarning unless it had no elements; it keeps its identity, and its storage when the
//   result fits, else it gets new memory. A view keeps its offset (writes land in its base
//   while they fit).
// - layout: an out of the result's shape keeps its strides; the result is written through them.
// - overlap: an out whose elements overlap each other (an expanded tensor) raises; so does one
//   that partly overlaps an input; the same memory with the same strides (out=x) is fine.
//   Only dense tensors are compared, as PyTorch's get_overlap_status ("too hard" otherwise).
//   An out that is also an input is not resized (RuntimeError, as PyTorch).

bool torch_can_cast(DType from, DType to) {
  return from == to || is_complex(to) || (is_floating(to) && !is_complex(from)) ||
         (is_integral(to) && (is_integral(from) || is_bool(from))) || is_bool(from);
}

void resize_(const Tensor& x, const Shape& shape, const char* op) {
  for (int64_t n : shape)
    if (n < 0)
      throw RuntimeError(
          str(op, ": Trying to create tensor with negative dimension ", n, ": ", shape_str(shape)));
  int64_t n = 1;
  for (int64_t d : shape) n = checked_mul(n, d, op);
  TensorImpl* impl = x.impl();
  const bool same_shape = impl->shape == shape;
  if (checked_mul(checked_add(x.offset(), n, op), x.itemsize(), op) > x.storage()->nbytes) {
    TS_CHECK(x.storage()->resizable, RuntimeError, op,
             ": Trying to resize storage that is not resizable (it is shared with NumPy, a "
             "memoryview or DLPack); hint: resize a copy (x.clone().resize_(...))");
    Tensor fresh = Tensor::empty(shape, x.dtype(), x.device());
    const int64_t keep = std::min(n, x.numel());
    if (keep > 0) {
      const autograd::GradModeGuard no_grad(false);
      copy_(slice(reshape(fresh, Shape{n}, -1), 0, 0, keep, 1),
            slice(reshape(contiguous(x), Shape{x.numel()}, -1), 0, 0, keep, 1));
    }
    impl->storage = fresh.storage();
    impl->offset = 0;
  }
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->refresh();
  // An AccumulateGrad made for the old shape would check grads against it.
  if (autograd::AutogradMeta* mt = autograd::get_meta(x); mt && !same_shape)
    mt->grad_accumulator.reset();
}

bool resize_output(const char* op, const Tensor& out, const Shape& shape) {
  if (out.shape() == shape) return false;
  if (out.numel() != 0) {
    auto brackets = [](const Shape& s) {
      std::string t = "[";
      for (size_t i = 0; i < static_cast<size_t>(s.size()); ++i)
        t += (i ? ", " : "") + std::to_string(s[i]);
      return t + "]";
    };
    warn(str(op, ": An output with one or more elements was resized since it had shape ",
             brackets(out.shape()), ", which does not match the required output shape ",
             brackets(shape),
             ". This behavior is deprecated, and in a future PyTorch release outputs will not "
             "be resized unless they have zero elements. You can explicitly reuse an out tensor "
             "t by resizing it, inplace, to zero elements with t.resize_(0)."));
  }
  resize_(out, shape, op);
  return true;
}

namespace {

enum class Overlap { No, Full, Partial, TooHard };

// PyTorch's get_overlap_status over dense tensors.
Overlap overlap_status(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl()) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::No;
  if (!is_non_overlapping_and_dense(a) || !is_non_overlapping_and_dense(b)) return Overlap::TooHard;
  if (a.storage()->data != b.storage()->data) return Overlap::No;
  const auto* ab = static_cast<const char*>(a.data_ptr());
  const auto* bb = static_cast<const char*>(b.data_ptr());
  const char* ae = ab + a.nbytes();
  const char* be = bb + b.nbytes();
  if (ab == bb && ae == be) return same_strides(a, b) ? Overlap::Full : Overlap::Partial;
  return ab < be && bb < ae ? Overlap::Partial : Overlap::No;
}

[[noreturn]] void out_grad_error(const char* op) {
  throw RuntimeError(str(op,
                         "(): functions with out=... arguments don't support automatic "
                         "differentiation, but one of the arguments requires grad; hint: "
                         "call it without out= or under ts.no_grad()"));
}

}  // namespace

void check_out(const char* op, const Tensor& out, Device device,
               const std::vector<const Tensor*>& inputs) {
  if (autograd::needs_grad({&out})) out_grad_error(op);
  for (const Tensor* in : inputs)
    if (autograd::needs_grad({in})) out_grad_error(op);
  if (out.device() != device)
    throw RuntimeError(str(op, ": Expected out tensor to have device ", device.str(), ", but got ",
                           out.device().str(),
                           " instead; hint: pass an out on the inputs' device"));
}

DType out_compute_dtype(const char* op, std::optional<DType> dtype, const Tensor& out) {
  if (dtype && *dtype != out.dtype())
    throw RuntimeError(str(op, ": Expected out tensor to have dtype ", dtype_name(*dtype),
                           ", but got ", dtype_name(out.dtype()),
                           " instead; hint: leave dtype= out to compute in out's dtype"));
  return out.dtype();
}

bool write_out(const char* op, const Tensor& out, const Tensor& r, OutDtype rule,
               const std::vector<const Tensor*>& inputs) {
  // (inputs that require grad matter only when the result is differentiable, as torch's
  // isposinf or argmax with out=)
  check_out(op, out, r.device(), is_inexact(r.dtype()) ? inputs : std::vector<const Tensor*>{});
  if (autograd::needs_grad({&r})) out_grad_error(op);
  const DType rd = r.dtype(), od = out.dtype();
  if (rule == OutDtype::Exact && rd != od)
    throw TypeError(str(op, ": Expected out tensor to have dtype ", dtype_name(rd), ", but got ",
                        dtype_name(od), " instead; hint: pass an out of dtype ", dtype_name(rd)));
  if (rule == OutDtype::Cast && !torch_can_cast(rd, od))
    throw TypeError(str(op, ": result type ", dtype_name(rd),
                        " can't be cast to the desired output type ", dtype_name(od),
                        " of out=; hint: pass an out of dtype ", dtype_name(rd)));
  if (out.shape() != r.shape())
    for (const Tensor* in : inputs)  // torch does not resize an out that is also an input
      if (in->defined() && (in->impl() == out.impl() || may_overlap(out, *in)))
        throw RuntimeError(str(op, ": output with shape ", shape_str(out.shape()),
                               " doesn't match the broadcast shape ", shape_str(r.shape()),
                               "; hint: out is also an input here: pass another out"));
  const bool resized = resize_output(op, out, r.shape());
  if (!resized) check_no_internal_overlap(out, op);
  for (const Tensor* in : inputs)
    if (in->defined() && overlap_status(out, *in) == Overlap::Partial)
      throw RuntimeError(str(op,
                             ": unsupported operation: some elements of the input tensor and "
                             "the written-to tensor refer to a single memory location. Please "
                             "clone() the tensor before performing the operation."));
  copy_(out, r);
  return resized;
}

}  // namespace ts
