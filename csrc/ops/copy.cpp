#include "ops/copy.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "core/device_backend.h"
#include "core/warning.h"
#include "kernels/acc_type.h"
#include "ops/memory_format.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(CopyKernel, copy_stub, "copy");
TS_DEFINE_STUB(FillKernel, fill_stub, "fill");

namespace {
// Byte range [lo, hi] that a tensor's elements span in memory.
void byte_span(const Tensor& t, uintptr_t& lo, uintptr_t& hi) {
  int64_t a = 0, b = 0;
  for (int64_t d = 0; d < t.ndim(); ++d) {
    const int64_t ext = (t.dim(d) - 1) * t.strides()[d];
    (ext < 0 ? a : b) += ext;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data_ptr());
  lo = base + a * t.itemsize();
  hi = base + b * t.itemsize() + t.itemsize() - 1;
}

// out = x converted to out's dtype (out fresh, of x's shape, in any layout).
void convert_into(const Tensor& out, const Tensor& x, const char* op) {
  if (out.numel() == 0) return;
  auto it = ElementwiseIter::make(out, {&x}, op);
  copy_stub.get(x.device())(it, out.dtype(), x.dtype());
}

}  // namespace

// True when the bytes of a and b may intersect. By address, not by Storage: a tensor imported
// zero-copy (asarray of a NumPy view, from_dlpack) has its own Storage over another's bytes.
bool has_internal_overlap(const Tensor& t) {
  if (t.is_contiguous()) return false;
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.dim(d) > 1 && t.strides()[d] == 0) return true;
  return false;
}

void check_no_internal_overlap(const Tensor& t, const char* op) {
  if (!has_internal_overlap(t)) return;
  int64_t dim = 0;
  while (!(t.dim(dim) > 1 && t.strides()[dim] == 0)) ++dim;
  throw RuntimeError(str(op,
                         ": unsupported operation: more than one element of the written-to "
                         "tensor refers to a single memory location. Please clone() the "
                         "tensor before performing the operation. (the written-to tensor has "
                         "shape ",
                         shape_str(t.shape()), " and stride 0 in dim ", dim,
                         "; hint: clone() it before writing to it)"));
}

void warn_expanded_write(const Tensor& t, const char* op) {
  if (!has_internal_overlap(t)) return;
  warn(str("Use of ", op,
           " on expanded tensors is deprecated. Please clone() the tensor before performing "
           "this operation. This also applies to advanced indexing e.g. ",
           std::string(op) == "masked_fill_" ? "tensor[mask] = scalar" : "tensor[indices] = tensor"));
}

bool may_overlap(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  uintptr_t alo, ahi, blo, bhi;
  byte_span(a, alo, ahi);
  byte_span(b, blo, bhi);
  return alo <= bhi && blo <= ahi;
}

// Each element is read and then written in place: same start, same byte layout.
bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.data_ptr() != b.data_ptr() || a.itemsize() != b.itemsize() || a.ndim() != b.ndim())
    return false;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (a.dim(d) != 1 && a.strides()[d] != b.strides()[d]) return false;
  return true;
}

// Note [Cross-device copy]: the bytes move between devices contiguous and already in dst's
// dtype and shape (cast and broadcast happen on the source side); a strided dst receives them
// through a contiguous temporary on its own device.
void copy_across_devices(const Tensor& dst, const Tensor& src, bool non_blocking) {
  DeviceBackend& b = require_cuda("copy");
  Tensor s = src.shape() == dst.shape() ? src : broadcast_to(src, dst.shape());
  s = astype(s, dst.dtype(), false);
  // Both dense with one layout (a transposed or channels-last tensor moved by x.to(device),
  // Note [Output strides]): the bytes move as they lie.
  if (!dst.is_contiguous() && same_strides(s, dst) && is_non_overlapping_and_dense(dst)) {
    b.copy_bytes(dst.data_ptr(), dst.device(), s.data_ptr(), s.device(), dst.nbytes(),
                 non_blocking);
    dst.bump_version();
    return;
  }
  s = contiguous(s);
  Tensor d = dst.is_contiguous() ? dst : Tensor::empty(dst.shape(), dst.dtype(), dst.device());
  b.copy_bytes(d.data_ptr(), d.device(), s.data_ptr(), s.device(), d.nbytes(), non_blocking);
  if (d.impl() != dst.impl()) copy_(dst, d);
  dst.bump_version();
}

void copy_(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.device() == src.device()) return copy_(dst, src);
  TS_CHECK(!dst.storage()->readonly, ValueError, "copy: the destination tensor is read-only");
  // One host value into device memory (x[...] = 5): a fill, no transfer.
  if (src.ndim() == 0 && src.device().is_cpu())
    return fill_(dst, item(astype(src, dst.dtype(), false)));
  if (dst.numel() != 0) copy_across_devices(dst, src, non_blocking);
}

Tensor to_device(const Tensor& x, Device device, bool non_blocking) {
  if (x.device() == device) return x;
  Tensor out = non_blocking && device.is_cpu() ? pin_memory(Tensor::empty(x.shape(), x.dtype()))
                                               : Tensor::empty(x.shape(), x.dtype(), device);
  copy_(out, x, non_blocking);
  return out;
}

Tensor pin_memory(const Tensor& x) {
  TS_CHECK(x.device().is_cpu(), RuntimeError, "pin_memory: only CPU tensors can be pinned, got a",
           " tensor on ", x.device().str());
  DeviceBackend& b = require_cuda("pin_memory");
  const int64_t n = x.nbytes();
  void* p = b.allocate_pinned(n);
  auto storage = std::make_shared<Storage>(p, n, Device{}, [&b, p] { b.free_pinned(p); });
  storage->pinned = true;
  Tensor out = Tensor::view_of(storage, x.shape(), contiguous_strides(x.shape()), 0, x.dtype());
  if (x.numel() != 0) copy_(out, x);
  return out;
}

bool is_pinned(const Tensor& x) { return x.storage()->pinned; }

void copy_(const Tensor& dst, const Tensor& src) {
  TS_CHECK(!dst.storage()->readonly, ValueError,
           "copy: the destination tensor is read-only (it shares memory with a read-only buffer)");
  // Like PyTorch's copy_, an explicit copy may cross devices.
  if (dst.device() != src.device()) return copy_(dst, src, false);
  if (dst.numel() == 0) return;
  Tensor s = src;
  if (may_overlap(dst, src) && !(src.shape() == dst.shape() && same_layout(dst, src)))
    s = clone(src);
  auto it = ElementwiseIter::make(dst, {&s}, "copy");
  copy_stub.get(dst.device())(it, dst.dtype(), s.dtype());
  dst.bump_version();
}

void fill_(const Tensor& dst, const Scalar& value) {
  TS_CHECK(!dst.storage()->readonly, ValueError, "fill: the destination tensor is read-only");
  if (dst.numel() == 0) return;
  fill_stub.get(dst.device())(dst, value);
  dst.bump_version();
}

Tensor clone(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  convert_into(out, x, "copy");
  return out;
}

Tensor clone_op(const Tensor& x) { return clone_op(x, MemoryFormat::Contiguous); }

Tensor clone_op(const Tensor& x, MemoryFormat fmt) {
  Tensor out = empty_in_format(x, x.dtype(), x.device(), fmt, "clone");
  convert_into(out, x, "copy");
  if (autograd::needs_grad({&x})) autograd::record_identity(x, out, "clone");
  return out;
}

Tensor contiguous_op(const Tensor& x) { return x.is_contiguous() ? x : clone_op(x); }

Tensor astype_op(const Tensor& x, DType dtype, bool copy, MemoryFormat fmt) {
  // As PyTorch's x.to(dtype) (preserve_format): a transposed or channels-last tensor casts to
  // one of the same strides (autocast's casts of a channels-last network copy no layouts).
  if (!copy && x.dtype() == dtype) return x;
  Tensor out = empty_in_format(x, dtype, x.device(), fmt, "to");
  convert_into(out, x, "astype");
  if (autograd::needs_grad({&x}) && is_inexact(dtype)) autograd::record_identity(x, out, "astype");
  return out;
}

Tensor astype(const Tensor& x, DType dtype, bool copy) {
  if (!copy && x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.shape(), dtype, x.device());
  convert_into(out, x, "astype");
  return out;
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor scalar_tensor(const Scalar& s, DType dtype) {
  Tensor t = Tensor::empty(Shape{}, dtype);
  visit_dtype<kAllSet>(dtype, "scalar", [&](auto tag) {
    using T = typename decltype(tag)::type;
    *t.data<T>() = s.to<T>();
  });
  return t;
}

Tensor wrap_scalar(const Scalar& s) {
  DType d = DType::Int64;
  switch (s.kind) {
    case ScalarKind::Bool:
      d = DType::Bool;
      break;
    case ScalarKind::Int:
      d = s.is_u64 ? DType::UInt64 : DType::Int64;
      break;
    case ScalarKind::Float:
      d = DType::Float64;
      break;
    case ScalarKind::Complex:
      d = DType::Complex128;
      break;
  }
  Tensor t = scalar_tensor(s, d);
  t.impl()->wrapped_number = true;
  return t;
}

Scalar item(const Tensor& x) {
  TS_CHECK(x.numel() == 1, ValueError, "item: only tensors with one element can be converted to a",
           " Python scalar, got shape ", shape_str(x.shape()));
  const Tensor c = to_device(x, Device{});
  return visit_dtype<kAllSet>(x.dtype(), "item", [&](auto tag) -> Scalar {
    using T = typename decltype(tag)::type;
    const T v = *c.data<T>();
    if constexpr (std::is_same_v<T, bool>)
      return Scalar::from_bool(v);
    else if constexpr (std::is_same_v<T, uint64_t>)
      return Scalar::from_uint(v);
    else if constexpr (std::is_integral_v<T>)
      return Scalar::from_int(static_cast<int64_t>(v));
    else if constexpr (std::is_same_v<T, c64> || std::is_same_v<T, c128>)
      return Scalar::from_complex(std::complex<double>(v.real(), v.imag()));
    else
      return Scalar::from_double(static_cast<double>(static_cast<acc_t<T>>(v)));
  });
}

}  // namespace ts
