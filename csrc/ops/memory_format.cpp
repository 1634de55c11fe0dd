#include "ops/memory_format.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include "core/error.h"
#include "iter/tensor_iter.h"
#include "ops/copy.h"
#include "ops/views.h"

namespace ts {

MemoryFormat memory_format_from_name(const std::string& name, const char* op) {
  if (name == "contiguous_format" || name == "legacy_contiguous_format")
    return MemoryFormat::Contiguous;
  if (name == "channels_last") return MemoryFormat::ChannelsLast;
  if (name == "channels_last_3d") return MemoryFormat::ChannelsLast3d;
  if (name == "preserve_format") return MemoryFormat::Preserve;
  TS_CHECK(false, ValueError, op, ": unknown memory format '", name,
           "' (expected contiguous_format, channels_last, channels_last_3d or preserve_format)");
  return MemoryFormat::Contiguous;
}

namespace {
// (N, *spatial, C) row-major strides on the logical (N, C, *spatial) shape.
Strides channels_last_strides_of(const Shape& shape) {
  const int64_t nd = shape.size();
  Strides st(nd);
  int64_t stride = 1;
  st[1] = stride;
  stride *= std::max<int64_t>(shape[1], 1);
  for (int64_t d = nd - 1; d >= 2; --d) {
    st[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  st[0] = stride;
  return st;
}

bool channels_last_strides(const Tensor& x) {
  const int64_t nd = x.ndim();
  const auto& st = x.strides();
  int64_t expect = 1;
  if (x.dim(1) != 1 && st[1] != expect) return false;
  expect *= x.dim(1);
  for (int64_t d = nd - 1; d >= 2; --d) {
    if (x.dim(d) != 1 && st[d] != expect) return false;
    expect *= x.dim(d);
  }
  return x.dim(0) == 1 || st[0] == expect;
}
}  // namespace

void check_channels_last_rank(const Tensor& x, MemoryFormat fmt, const char* op) {
  const int64_t rank = fmt == MemoryFormat::ChannelsLast3d ? 5 : 4;
  TS_CHECK(x.ndim() == rank, ValueError, op, ": required rank ", rank, " tensor to use ",
           rank == 4 ? "channels_last" : "channels_last_3d", " format, got shape ",
           shape_str(x.shape()));
}

bool is_contiguous_as(const Tensor& x, MemoryFormat fmt) {
  switch (fmt) {
    case MemoryFormat::ChannelsLast:
      return x.ndim() == 4 && channels_last_strides(x);
    case MemoryFormat::ChannelsLast3d:
      return x.ndim() == 5 && channels_last_strides(x);
    default:
      return x.is_contiguous();
  }
}

bool is_non_overlapping_and_dense(const Tensor& x) {
  return x.numel() == 0 || is_packed(x.shape(), x.strides());
}

bool same_strides(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (a.dim(d) != 1 && a.strides()[d] != b.strides()[d]) return false;
  return true;
}

namespace {
bool dense_not_contiguous(const Tensor& t) {
  return !t.is_contiguous() && t.numel() > 0 && is_non_overlapping_and_dense(t);
}
Tensor empty_strided_like(const Tensor& like, DType dtype, Device device) {
  return Tensor::empty(Shape{like.numel()}, dtype, device)
      .as_strided(like.shape(), like.strides(), 0);
}
}  // namespace

Tensor empty_in_layout_of(const Tensor& like) {
  return dense_not_contiguous(like) ? empty_strided_like(like, like.dtype(), like.device())
                                    : Tensor::empty(like.shape(), like.dtype(), like.device());
}

Tensor copy_in_layout_of(const Tensor& x, const Tensor& like, bool copy) {
  if (!dense_not_contiguous(like)) return copy ? clone(x) : contiguous(x);
  if (!copy && same_strides(x, like)) return x;
  Tensor out = empty_strided_like(like, x.dtype(), x.device());
  copy_(out, x);
  return out;
}

Strides preserved_strides(const Tensor& x) {
  const int64_t n = x.ndim();
  const Shape& shape = x.shape();
  const Strides& strides = x.strides();
  const Strides row_major = contiguous_strides(shape);
  if (strides == row_major) return {};  // the common case, without sorting
  if (x.numel() == 0 || is_non_overlapping_and_dense(x)) return strides;
  // ATen's infer_dense_strides: dims sorted by |stride| (a stable insertion sort from the last
  // dim; zero strides stay in place, ties put the smaller size inner), then packed densely.
  std::vector<int64_t> perm(n);
  for (int64_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    const int64_t s0 = std::abs(strides[d0]), s1 = std::abs(strides[d1]);
    if (s0 == 0 || s1 == 0) return 0;
    if (s0 != s1) return s0 < s1 ? -1 : 1;
    return shape[d0] > shape[d1] ? 1 : 0;
  };
  sort_dims(perm, should_swap);
  Strides out(n);
  int64_t acc = 1;
  for (int64_t d : perm) {
    out[d] = acc;
    acc *= std::max<int64_t>(shape[d], 1);
  }
  return out == row_major ? Strides{} : out;
}

Tensor fresh_strided(const Tensor& flat, const Shape& shape, const Strides& strides) {
  Tensor t = flat.as_strided(shape, strides, 0);
  t.impl()->is_view = false;  // a fresh result, not a view (autograd must not track it as one)
  return t;
}

Tensor empty_preserving_layout(const Tensor& like, DType dtype, Device device) {
  const Strides st = preserved_strides(like);
  if (st.empty()) return Tensor::empty(like.shape(), dtype, device);
  return fresh_strided(Tensor::empty(Shape{like.numel()}, dtype, device), like.shape(), st);
}

Strides strides_in_format(const Tensor& like, MemoryFormat fmt, const char* op) {
  switch (fmt) {
    case MemoryFormat::Preserve: {
      Strides st = preserved_strides(like);
      return st.empty() ? contiguous_strides(like.shape()) : st;
    }
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d:
      check_channels_last_rank(like, fmt, op);
      return channels_last_strides_of(like.shape());
    case MemoryFormat::Contiguous:
      break;
  }
  return contiguous_strides(like.shape());
}

Tensor empty_in_format(const Tensor& like, DType dtype, Device device, MemoryFormat fmt,
                       const char* op) {
  if (fmt == MemoryFormat::Preserve) return empty_preserving_layout(like, dtype, device);
  if (fmt == MemoryFormat::Contiguous) return Tensor::empty(like.shape(), dtype, device);
  return fresh_strided(Tensor::empty(Shape{like.numel()}, dtype, device), like.shape(),
                       strides_in_format(like, fmt, op));
}

bool is_channels_last(const Tensor& x) {
  return (x.ndim() == 4 || x.ndim() == 5) && !x.is_contiguous() && channels_last_strides(x);
}

Tensor to_channels_last(const Tensor& x) {
  const int64_t nd = x.ndim();
  if ((nd != 4 && nd != 5) || channels_last_strides(x)) return x;
  Shape to_last{0}, back{0, nd - 1};
  for (int64_t d = 2; d < nd; ++d) to_last.push_back(d);
  to_last.push_back(1);
  for (int64_t d = 1; d < nd - 1; ++d) back.push_back(d);
  return permute_dims(contiguous_op(permute_dims(x, to_last)), back);
}

Tensor empty_channels_last(const Shape& shape, DType dtype, Device device) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  if (nd != 4 && nd != 5) return Tensor::empty(shape, dtype, device);
  return fresh_strided(Tensor::empty(Shape{numel_of(shape)}, dtype, device), shape,
                       channels_last_strides_of(shape));
}

Tensor to_memory_format(const Tensor& x, MemoryFormat fmt, const char* op) {
  switch (fmt) {
    case MemoryFormat::Preserve:
      return x;
    case MemoryFormat::Contiguous:
      return contiguous_op(x);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d:
      check_channels_last_rank(x, fmt, op);
      return to_channels_last(x);
  }
  return x;
}

}  // namespace ts
