#include "ops/memory_format.h"

#include <algorithm>

#include "core/error.h"
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
  int64_t numel = 1;
  for (int64_t v : shape) numel *= v;
  // (N, *spatial, C) row-major strides on the logical (N, C, *spatial) shape.
  Strides st(nd);
  int64_t stride = 1;
  st[1] = stride;
  stride *= std::max<int64_t>(shape[1], 1);
  for (int64_t d = nd - 1; d >= 2; --d) {
    st[d] = stride;
    stride *= std::max<int64_t>(shape[d], 1);
  }
  st[0] = stride;
  Tensor t = Tensor::empty(Shape{numel}, dtype, device).as_strided(shape, st, 0);
  t.impl()->is_view = false;  // a fresh result, not a view (autograd must not track it as one)
  return t;
}

Tensor to_memory_format(const Tensor& x, MemoryFormat fmt, const char* op) {
  switch (fmt) {
    case MemoryFormat::Preserve:
      return x;
    case MemoryFormat::Contiguous:
      return contiguous_op(x);
    case MemoryFormat::ChannelsLast:
    case MemoryFormat::ChannelsLast3d: {
      const int64_t rank = fmt == MemoryFormat::ChannelsLast ? 4 : 5;
      TS_CHECK(x.ndim() == rank, ValueError, op, ": required rank ", rank, " tensor to use ",
               rank == 4 ? "channels_last" : "channels_last_3d", " format, got shape ",
               shape_str(x.shape()));
      return to_channels_last(x);
    }
  }
  return x;
}

}  // namespace ts
