#include "ops/views.h"

#include <algorithm>

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/copy.h"

namespace ts {

namespace {
// A reshape-like view: recorded when x needs grad, else only noted (Note [Writes into views]).
void record_reshape_view(const Tensor& x, const Tensor& v) {
  if (autograd::needs_grad({&x}))
    autograd::record_reshape(x, v);
  else
    autograd::note_view(x, v);
}
}  // namespace

Shape infer_shape(const Shape& shape, int64_t numel, const char* op, const Shape& from) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (int64_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      TS_CHECK(infer < 0, ValueError, op, ": can only specify one unknown dimension (-1), got ",
               shape_str(shape));
      infer = i;
    } else {
      TS_CHECK(out[i] >= 0, ValueError, op, ": negative dimension ", out[i], " in shape ",
               shape_str(shape));
      known = checked_mul(known, out[i], op);
    }
  }
  if (infer >= 0) {
    TS_CHECK(known != 0 && numel % known == 0, ValueError, op,
             ": cannot reshape a tensor of shape ", shape_str(from), " (", numel,
             " elements) into shape ", shape_str(shape));
    out[infer] = numel / known;
  } else {
    TS_CHECK(known == numel, ValueError, op, ": cannot reshape a tensor of shape ", shape_str(from),
             " (", numel, " elements) into shape ", shape_str(shape), " (", known, " elements)");
  }
  return out;
}

// Walks both shapes in chunks of equal element count; each old chunk must be one
// stride-consistent block for the new dims of that chunk to be expressible.
bool view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape,
                  Strides& out) {
  const int64_t numel = numel_of(old_shape);
  out.resize(shape.size(), 0);
  if (numel == 0) {
    out = contiguous_strides(shape);
    return true;
  }
  int64_t view_d = shape.size() - 1;
  int64_t chunk_base = old_strides.size() ? old_strides.back() : 1;
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = old_shape.size() - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = checked_mul(view_numel, chunk_base, "view");
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    for (; view_d >= 0; --view_d) {
      if (shape[view_d] != 1) return false;
      out[view_d] = 1;
    }
  }
  return true;
}

Tensor reshape(const Tensor& x, Shape shape, int copy) {
  shape = infer_shape(shape, x.numel(), "reshape", x.shape());
  if (copy != 1) {
    Strides st;
    if (view_strides(x.shape(), x.strides(), shape, st)) {
      Tensor v = x.as_strided(shape, st, x.offset());
      record_reshape_view(x, v);
      return v;
    }
    TS_CHECK(copy != 0, ValueError, "reshape: copy=False but a tensor of shape ",
             shape_str(x.shape()), " with these strides cannot be viewed as ", shape_str(shape));
  }
  Tensor c;
  {
    autograd::GradModeGuard no_grad(false);
    c = clone(x);
  }
  Tensor r = c.as_strided(shape, contiguous_strides(shape), 0);
  r.impl()->is_view = false;  // a fresh copy, not a view of x
  if (autograd::needs_grad({&x})) autograd::record_reshape(x, r);
  return r;
}

Tensor view(const Tensor& x, Shape shape, const char* op) {
  shape = infer_shape(shape, x.numel(), op, x.shape());
  Strides st;
  TS_CHECK(view_strides(x.shape(), x.strides(), shape, st), RuntimeError, op,
           ": view size is not compatible with input tensor's size and stride (at least one "
           "dimension spans across two contiguous subspaces): a tensor of shape ",
           shape_str(x.shape()), " with strides ", shape_str(x.strides()),
           " cannot be viewed as ", shape_str(shape), ". Use .reshape(...) instead.");
  return reshape(x, shape, 0);
}

Tensor permute_dims(const Tensor& x, const Shape& axes) {
  const int64_t nd = x.ndim();
  TS_CHECK(axes.size() == nd, ValueError, "permute_dims: axes ", shape_str(axes),
           " do not match a tensor of dimension ", nd);
  Shape shape(nd);
  Strides st(nd);
  SmallVec<bool, 8> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t a = normalize_axis(axes[i], nd, "permute_dims");
    TS_CHECK(!seen[a], ValueError, "permute_dims: repeated axis ", axes[i], " in ",
             shape_str(axes));
    seen[a] = true;
    shape[i] = x.dim(a);
    st[i] = x.strides()[a];
  }
  Tensor v = x.as_strided(shape, st, x.offset());
  if (autograd::needs_grad({&x}))
    autograd::record_permute(x, v, axes);
  else
    autograd::note_view(x, v);
  return v;
}

Tensor matrix_transpose(const Tensor& x) {
  TS_CHECK(x.ndim() >= 2, ValueError, "matrix_transpose: expected a tensor with at least 2 ",
           "dimensions, got shape ", shape_str(x.shape()));
  Shape s = x.shape();
  Strides st = x.strides();
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  std::swap(st[st.size() - 1], st[st.size() - 2]);
  Tensor v = x.as_strided(s, st, x.offset());
  if (autograd::needs_grad({&x})) {
    Shape axes;
    for (int64_t d = 0; d < x.ndim(); ++d) axes.push_back(d);
    std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
    autograd::record_permute(x, v, axes);
  } else {
    autograd::note_view(x, v);
  }
  return v;
}

Tensor transpose_all(const Tensor& x) {
  Shape s(x.shape().begin(), x.shape().end());
  Strides st(x.strides().begin(), x.strides().end());
  std::reverse(s.begin(), s.end());
  std::reverse(st.begin(), st.end());
  Tensor v = x.as_strided(s, st, x.offset());
  if (autograd::needs_grad({&x})) {
    Shape axes;
    for (int64_t d = x.ndim() - 1; d >= 0; --d) axes.push_back(d);
    autograd::record_permute(x, v, axes);
  } else {
    autograd::note_view(x, v);
  }
  return v;
}

Tensor expand_dims(const Tensor& x, int64_t axis) {
  const int64_t nd = x.ndim() + 1;
  TS_CHECK(axis >= -nd && axis < nd, IndexError, "expand_dims: axis ", axis,
           " is out of bounds for the result of dimension ", nd);
  if (axis < 0) axis += nd;
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t stride =
      axis < x.ndim() ? checked_mul(x.strides()[axis], x.dim(axis), "expand_dims") : 1;
  s.insert(axis, 1);
  st.insert(axis, stride);
  Tensor v = x.as_strided(s, st, x.offset());
  record_reshape_view(x, v);
  return v;
}

Tensor squeeze(const Tensor& x, const Shape& axes) {
  SmallVec<bool, 8> drop(x.ndim(), false);
  for (int64_t a : axes) {
    const int64_t ax = normalize_axis(a, x.ndim(), "squeeze");
    TS_CHECK(x.dim(ax) == 1, ValueError, "squeeze: cannot squeeze axis ", a, " of size ", x.dim(ax),
             " (shape ", shape_str(x.shape()), "); only size-1 axes can be removed");
    TS_CHECK(!drop[ax], ValueError, "squeeze: repeated axis ", a);
    drop[ax] = true;
  }
  Shape s;
  Strides st;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!drop[d]) {
      s.push_back(x.dim(d));
      st.push_back(x.strides()[d]);
    }
  Tensor v = x.as_strided(s, st, x.offset());
  record_reshape_view(x, v);
  return v;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  const int64_t nd = shape.size(), lead = nd - x.ndim();
  auto fail = [&]() {
    throw ValueError(str("broadcast_to: cannot broadcast a tensor of shape ", shape_str(x.shape()),
                         " to shape ", shape_str(shape)));
  };
  if (lead < 0) fail();
  Strides st(nd, 0);
  for (int64_t d = 0; d < nd; ++d) {
    TS_CHECK(shape[d] >= 0, ValueError, "broadcast_to: negative dimension in ", shape_str(shape));
    if (d < lead) continue;
    const int64_t s = x.dim(d - lead);
    if (s == shape[d])
      st[d] = s == 1 ? 0 : x.strides()[d - lead];
    else if (s == 1)
      st[d] = 0;
    else
      fail();
  }
  Tensor v = x.as_strided(shape, st, x.offset());
  if (autograd::needs_grad({&x})) autograd::record_identity(x, v, "broadcast_to");
  return v;
}

Tensor flip(const Tensor& x, const Shape& axes) {
  Strides st = x.strides();
  int64_t off = x.offset();
  SmallVec<bool, 8> seen(x.ndim(), false);
  for (int64_t a : axes) {
    const int64_t ax = normalize_axis(a, x.ndim(), "flip");
    TS_CHECK(!seen[ax], ValueError, "flip: repeated axis ", a);
    seen[ax] = true;
    if (x.dim(ax) > 0) off += (x.dim(ax) - 1) * st[ax];
    st[ax] = -st[ax];
  }
  Tensor v = x.as_strided(x.shape(), st, off);
  if (autograd::needs_grad({&x}))
    autograd::record_flip(x, v, axes);
  else
    autograd::note_view(x, v);
  return v;
}

Tensor flip_all(const Tensor& x) {
  Shape axes;
  for (int64_t d = 0; d < x.ndim(); ++d) axes.push_back(d);
  return flip(x, axes);
}

Tensor moveaxis(const Tensor& x, const Shape& source, const Shape& destination) {
  const int64_t nd = x.ndim();
  TS_CHECK(source.size() == destination.size(), ValueError, "moveaxis: source ", shape_str(source),
           " and destination ", shape_str(destination), " must have the same number of elements");
  Shape src, dst;
  SmallVec<bool, 8> used_s(nd, false), used_d(nd, false);
  for (int64_t i = 0; i < source.size(); ++i) {
    const int64_t s = normalize_axis(source[i], nd, "moveaxis");
    const int64_t d = normalize_axis(destination[i], nd, "moveaxis");
    TS_CHECK(!used_s[s] && !used_d[d], ValueError, "moveaxis: repeated axis");
    used_s[s] = used_d[d] = true;
    src.push_back(s);
    dst.push_back(d);
  }
  Shape order(nd, -1);
  for (int64_t i = 0; i < src.size(); ++i) order[dst[i]] = src[i];
  int64_t next = 0;
  for (int64_t d = 0; d < nd; ++d) {
    if (order[d] >= 0) continue;
    while (used_s[next]) ++next;
    order[d] = next++;
  }
  return permute_dims(x, order);
}

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  TS_CHECK(step != 0, ValueError, "slice: step cannot be zero");
  int64_t len = 0;
  // (Written so that no step, however large, overflows: start and stop are in range.)
  if (step > 0 && stop > start) len = (stop - start - 1) / step + 1;
  if (step < 0 && start > stop) len = step == INT64_MIN ? 1 : (start - stop - 1) / -step + 1;
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t off = x.offset() + (len > 0 ? start * st[axis] : 0);
  s[axis] = len;
  // A stride of a dim of size <= 1 is never used: one that would overflow stays as it was.
  int64_t stepped;
  if (mul_ok(st[axis], step, &stepped))
    st[axis] = stepped;
  else if (len > 1)
    throw ValueError(str("slice: stride ", st[axis], " times step ", step, " overflows int64"));
  Tensor v = x.as_strided(s, st, off);
  if (autograd::needs_grad({&x}))
    autograd::record_slice(x, v, axis, start, stop, step);
  else
    autograd::note_view(x, v);
  return v;
}

std::vector<Tensor> split_with_sizes(const Tensor& x, int64_t axis, const Shape& sizes) {
  TS_CHECK(x.ndim() > 0, RuntimeError, "split: expected at least a 1-dimensional tensor");
  TS_CHECK(axis >= 0 && axis < x.ndim(), IndexError, "split: dimension ", axis,
           " out of range for a tensor of ", x.ndim(), " dims");
  int64_t total = 0;
  bool ok = true;
  for (int64_t s : sizes) ok = ok && s >= 0 && add_ok(total, s, &total);
  TS_CHECK(ok && total == x.dim(axis), RuntimeError,
           "split: split_with_sizes expects split_sizes to sum exactly to ", x.dim(axis),
           " (input tensor's size at dimension ", axis,
           "), but got split_sizes=", shape_str(sizes));
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t len : sizes) {
    Shape s = x.shape();
    s[axis] = len;
    out.push_back(
        x.as_strided(s, x.strides(), x.offset() + (len > 0 ? start * x.strides()[axis] : 0)));
    start += len;
  }
  if (autograd::needs_grad({&x}))
    autograd::record_split(x, out, axis);
  else
    for (const Tensor& v : out) autograd::note_view(x, v);
  return out;
}

Tensor select(const Tensor& x, int64_t axis, int64_t index) {
  const int64_t size = x.dim(axis);
  TS_CHECK(index >= -size && index < size, IndexError, "index ", index,
           " is out of bounds for axis ", axis, " with size ", size);
  if (index < 0) index += size;
  Shape s = x.shape();
  Strides st = x.strides();
  const int64_t off = x.offset() + index * st[axis];
  s.erase(axis);
  st.erase(axis);
  Tensor v = x.as_strided(s, st, off);
  if (autograd::needs_grad({&x}))
    autograd::record_select(x, v, axis, index);
  else
    autograd::note_view(x, v);
  return v;
}

Tensor diagonal(const Tensor& x, int64_t offset, int64_t axis1, int64_t axis2) {
  const int64_t nd = x.ndim();
  TS_CHECK(nd >= 2, ValueError, "diagonal: expected at least 2 dimensions, got shape ",
           shape_str(x.shape()));
  const int64_t a1 = normalize_axis(axis1, nd, "diagonal"),
                a2 = normalize_axis(axis2, nd, "diagonal");
  TS_CHECK(a1 != a2, ValueError, "diagonal: axis1 and axis2 must differ");
  int64_t off = x.offset(), len;
  if (offset >= 0) {
    len = std::max<int64_t>(0, std::min(x.dim(a1), x.dim(a2) - offset));
    if (len > 0) off += offset * x.strides()[a2];
  } else {
    len = std::max<int64_t>(0, std::min(x.dim(a1) + offset, x.dim(a2)));
    if (len > 0) off -= offset * x.strides()[a1];
  }
  Shape s;
  Strides st;
  for (int64_t d = 0; d < nd; ++d)
    if (d != a1 && d != a2) {
      s.push_back(x.dim(d));
      st.push_back(x.strides()[d]);
    }
  s.push_back(len);
  st.push_back(checked_add(x.strides()[a1], x.strides()[a2], "diagonal"));
  Tensor v = x.as_strided(s, st, off);
  if (autograd::needs_grad({&x}))
    autograd::record_diagonal(x, v, offset, a1, a2);
  else
    autograd::note_view(x, v);
  return v;
}

namespace {
// A view of x's bytes as another dtype (not recorded by autograd: only noted as a view).
Tensor reinterpreted_view(const Tensor& x, const Shape& s, const Strides& st, int64_t off,
                          DType dtype) {
  Tensor v = Tensor::view_of(x.storage(), s, st, off, dtype);
  v.impl()->is_view = true;
  autograd::note_view(x, v);
  return v;
}
}  // namespace

// Element strides and the offset scale by old/new item size; PyTorch's rules and messages.
Tensor view_dtype(const Tensor& x, DType dtype) {
  const int64_t from = x.itemsize(), to = ts::itemsize(dtype);
  Shape s = x.shape();
  Strides st = x.strides();
  int64_t off = x.offset();
  if (from != to) {
    const char* fn = dtype_name(x.dtype());
    const char* tn = dtype_name(dtype);
    TS_CHECK(x.ndim() > 0, RuntimeError, "view: a 0-d tensor cannot be viewed as ", tn, " from ",
             fn, " (different element sizes); hint: reshape it to (1,) first");
    const int64_t last = x.ndim() - 1;
    TS_CHECK(st[last] == 1 || s[last] == 1, RuntimeError,
             "view: the last dim must have stride 1 to view ", fn, " as ", tn,
             " (different element sizes), but got strides ", shape_str(st),
             "; hint: call .contiguous() first");
    if (from > to) {
      const int64_t r = from / to;
      for (int64_t d = 0; d < last; ++d) st[d] = checked_mul(st[d], r, "view");
      s[last] = checked_mul(s[last], r, "view");
      st[last] = 1;
      off = checked_mul(off, r, "view");
    } else {
      const int64_t r = to / from;
      TS_CHECK(s[last] % r == 0, RuntimeError, "view: the last dim (size ", s[last],
               ") must be divisible by ", r, " to view ", fn, " as ", tn,
               " (different element sizes); shape ", shape_str(s));
      TS_CHECK(off % r == 0, RuntimeError, "view: the storage offset (", off,
               ") must be divisible by ", r, " to view ", fn, " as ", tn);
      for (int64_t d = 0; d < last; ++d) {
        TS_CHECK(st[d] % r == 0, RuntimeError, "view: stride ", st[d], " of dim ", d,
                 " must be divisible by ", r, " to view ", fn, " as ", tn, "; strides ",
                 shape_str(st));
        st[d] /= r;
      }
      s[last] /= r;
      st[last] = 1;
      off /= r;
    }
  }
  return reinterpreted_view(x, s, st, off, dtype);
}

Tensor view_as_real(const Tensor& x) {
  TS_CHECK(is_complex(x.dtype()), RuntimeError,
           "view_as_real is only supported for complex tensors, got ", dtype_name(x.dtype()));
  Shape s = x.shape();
  Strides st = x.strides();
  for (int64_t& v : st) v = checked_mul(v, 2, "view_as_real");
  s.push_back(2);
  st.push_back(1);
  const DType real_dtype = x.dtype() == DType::Complex64 ? DType::Float32 : DType::Float64;
  Tensor v = reinterpreted_view(x, s, st, checked_mul(x.offset(), 2, "view_as_real"), real_dtype);
  autograd::record_view_as(x, v, true);
  return v;
}

Tensor view_as_complex(const Tensor& x) {
  TS_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64, RuntimeError,
           "view_as_complex is only supported for float32 and float64 tensors, got ",
           dtype_name(x.dtype()));
  TS_CHECK(x.ndim() > 0, RuntimeError,
           "view_as_complex: the input must have one or more dimensions");
  const int64_t last = x.ndim() - 1;
  TS_CHECK(x.dim(last) == 2, RuntimeError,
           "view_as_complex: the tensor must have a last dimension of size 2, got shape ",
           shape_str(x.shape()));
  TS_CHECK(x.strides()[last] == 1, RuntimeError,
           "view_as_complex: the tensor must have a last dimension with stride 1, got strides ",
           shape_str(x.strides()), "; hint: call .contiguous() first");
  Shape s(x.shape().begin(), x.shape().end() - 1);
  Strides st(x.strides().begin(), x.strides().end() - 1);
  for (int64_t& v : st) {
    TS_CHECK(v % 2 == 0, RuntimeError, "view_as_complex: the tensor must have a stride divisible ",
             "by 2 for all but the last dimension, got strides ", shape_str(x.strides()));
    v /= 2;
  }
  TS_CHECK(x.offset() % 2 == 0, RuntimeError,
           "view_as_complex: the tensor must have a storage_offset divisible by 2, got ",
           x.offset());
  const DType cdtype = x.dtype() == DType::Float32 ? DType::Complex64 : DType::Complex128;
  Tensor v = reinterpreted_view(x, s, st, x.offset() / 2, cdtype);
  autograd::record_view_as(x, v, false);
  return v;
}

}  // namespace ts
