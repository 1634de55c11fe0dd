#include "ops/copy.h"

#include "autograd/function.h"
#include "autograd/record.h"

namespace ts {

TS_DEFINE_STUB(CopyKernel, copy_stub, "copy");
TS_DEFINE_STUB(FillKernel, fill_stub, "fill");

namespace {
// True when the memory spans of a and b may intersect.
bool may_overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
  auto span = [](const Tensor& t, int64_t& lo, int64_t& hi) {
    lo = hi = t.offset();
    for (int64_t d = 0; d < t.ndim(); ++d) {
      const int64_t ext = (t.dim(d) - 1) * t.strides()[d];
      (ext < 0 ? lo : hi) += ext;
    }
  };
  int64_t alo, ahi, blo, bhi;
  span(a, alo, ahi);
  span(b, blo, bhi);
  return alo <= bhi && blo <= ahi;
}
}  // namespace

void copy_(const Tensor& dst, const Tensor& src) {
  TS_CHECK(!dst.storage()->readonly, ValueError,
           "copy: the destination tensor is read-only (it shares memory with a read-only buffer)");
  TS_CHECK(dst.device() == src.device(), RuntimeError, "copy: tensors on different devices (",
           dst.device().str(), " and ", src.device().str(), ")");
  if (dst.numel() == 0) return;
  Tensor s = src;
  if (may_overlap(dst, src) &&
      !(dst.data_ptr() == src.data_ptr() && dst.strides() == src.strides()))
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
  if (x.numel() == 0) return out;
  auto it = ElementwiseIter::make(out, {&x}, "copy");
  copy_stub.get(x.device())(it, x.dtype(), x.dtype());
  return out;
}

Tensor clone_op(const Tensor& x) {
  Tensor out = clone(x);
  if (autograd::needs_grad({&x})) autograd::record_identity(x, out, "clone");
  return out;
}

Tensor contiguous_op(const Tensor& x) { return x.is_contiguous() ? x : clone_op(x); }

Tensor astype_op(const Tensor& x, DType dtype, bool copy) {
  Tensor out = astype(x, dtype, copy);
  if (out.impl() != x.impl() && autograd::needs_grad({&x}) && is_inexact(dtype))
    autograd::record_identity(x, out, "astype");
  return out;
}

Tensor astype(const Tensor& x, DType dtype, bool copy) {
  if (!copy && x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.shape(), dtype, x.device());
  if (x.numel() == 0) return out;
  auto it = ElementwiseIter::make(out, {&x}, "astype");
  copy_stub.get(x.device())(it, dtype, x.dtype());
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
  TS_CHECK(x.device().is_cpu(), RuntimeError, "item: tensor is on ", x.device().str());
  const Tensor& c = x;
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
