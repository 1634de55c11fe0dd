#include "ops/indexing_scatter.h"

#include <algorithm>
#include <vector>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record_indexing_scatter.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/cumulative.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/manipulation.h"
#include "ops/memory_format.h"
#include "ops/reduce.h"
#include "ops/rounding.h"
#include "ops/views.h"
#include "ops/where.h"

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

namespace {

AdvKey key_of(const std::vector<Tensor>& indices) {
  AdvKey key;
  for (const Tensor& t : indices) {
    AdvItem it;
    if (t.defined()) {
      it.array = t;
    } else {  // a full slice
      it.item.kind = IndexItem::Slice;
      it.item.start = 0;
      it.item.stop = INT64_MAX;
      it.item.step = 1;
    }
    key.push_back(std::move(it));
  }
  return key;
}

// The selection's errors (an index out of range, too many indices) named by `op`.
template <class F>
auto named(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const IndexError& e) {
    throw IndexError(str(op, ": ", e.what()));
  }
}

void check_same_dtype(const char* op, const Tensor& x, const Tensor& v, const char* what) {
  TS_CHECK(v.dtype() == x.dtype(), RuntimeError, op, ": ", what, " (", dtype_name(v.dtype()),
           ") must have the same dtype as self (", dtype_name(x.dtype()), "); hint: cast it with ",
           ".to(self.dtype)");
}

}  // namespace

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate, const char* op) {
  check_same_dtype(op, x, values, "values");
  bool any_tensor = false;
  for (const Tensor& t : indices) any_tensor = any_tensor || t.defined();
  TS_CHECK(any_tensor, RuntimeError, op, ": expected at least one index tensor in indices (got ",
           indices.size(), " entries, none a tensor) for input of shape ", shape_str(x.shape()),
           "; hint: pass (index,) with an integer or bool tensor");
  const AdvKey key = key_of(indices);
  if (!accumulate) {
    Tensor out = clone_op(x);
    named(op, [&] {
      index_put_advanced(out, key, values);
      return 0;
    });
    return out;
  }
  // Every element's flat position, selected with the same key, says where each value adds.
  const int64_t n = x.numel();
  const Tensor flat = reshape(arange(Scalar::from_int(0), Scalar::from_int(n), Scalar::from_int(1),
                                     DType::Int64, x.device()),
                              x.shape());
  const Tensor pos = named(op, [&] { return index_advanced(flat, key); });
  TS_CHECK(broadcast_shapes(values.shape(), pos.shape(), op) == pos.shape(), ValueError, op,
           ": values ", shape_str(values.shape()), " cannot be broadcast to the selection ",
           shape_str(pos.shape()));
  const Tensor v = reshape(broadcast_to(values, pos.shape()), {-1});
  return reshape(index_add(reshape(x, {-1}), 0, reshape(pos, {-1}), v), x.shape());
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter";
  TS_CHECK(mask.dtype() == DType::Bool, RuntimeError, op, ": expected mask to have dtype bool, ",
           "got ", dtype_name(mask.dtype()), "; hint: pass mask.bool()");
  check_same_dtype(op, x, source, "source");
  TS_CHECK(broadcast_shapes(mask.shape(), x.shape(), op) == x.shape(), RuntimeError, op, ": mask ",
           shape_str(mask.shape()), " cannot be broadcast to self ", shape_str(x.shape()));
  const Tensor m = broadcast_to(to_device(mask, x.device()), x.shape());
  const Tensor src = reshape(source, {-1});
  // pos[i]: how many true elements precede element i (row-major), the source element it takes.
  const Tensor pos = subtract(
      cumulative_sum(reshape(astype(m, DType::Int64, false), {-1}), 0, std::nullopt, false),
      wrap_scalar(Scalar::from_int(1)));
  const int64_t count = x.numel() ? item(select(pos, 0, x.numel() - 1)).i + 1 : 0;
  TS_CHECK(count <= src.numel(), RuntimeError, op, ": number of elements in source (", src.numel(),
           ") < number of ones in mask (", count, ")");
  if (src.numel() == 0) return clone_op(x);
  const Tensor at =
      clip(pos, wrap_scalar(Scalar::from_int(0)), wrap_scalar(Scalar::from_int(src.numel() - 1)));
  return where(m, reshape(index_select(src, 0, at), x.shape()), x);
}

Tensor put(const Tensor& x, const Tensor& index, const Tensor& source, bool accumulate) {
  const char* op = "put";
  TS_CHECK(index.numel() == source.numel(), RuntimeError, op,
           ": expected source and index to have the same number of elements, but got ",
           source.numel(), " and ", index.numel());
  TS_CHECK(is_integral(index.dtype()), TypeError, op, ": index must be an integer tensor, got ",
           dtype_name(index.dtype()));
  check_same_dtype(op, x, source, "source");
  TS_CHECK(x.numel() > 0 || index.numel() == 0, IndexError, op,
           ": cannot put into an empty tensor (", index.numel(), " indices)");
  const Tensor flat =
      index_put(reshape(x, {-1}), {reshape(index, {-1})}, reshape(source, {-1}), accumulate, op);
  return reshape(flat, x.shape());
}

namespace {

// A copy of x with the region `key` selects (a basic key) replaced by src; the write is
// recorded as a setitem on the copy, so gradients reach x and src.
Tensor scatter_into(const char* op, const Tensor& x, const IndexKey& key, const Tensor& src) {
  Tensor out = clone_op(x);
  Shape region;
  {
    autograd::GradModeGuard no_grad(false);
    region = index_basic(out, key).shape();
  }
  TS_CHECK(src.shape() == region, RuntimeError, op,
           ": expected src to have a size equal to the slice of self, src size = ",
           shape_str(src.shape()), ", slice size = ", shape_str(region));
  index_put_basic(out, key, src);
  return out;
}

IndexKey leading_full_slices(int64_t n) {
  IndexItem all;
  all.kind = IndexItem::Slice;
  all.start = 0;
  all.stop = INT64_MAX;
  return IndexKey(n, all);
}

}  // namespace

Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index) {
  const char* op = "select_scatter";
  TS_CHECK(x.ndim() > 0, IndexError, op, ": self must have at least one dim, got a 0-d tensor");
  const int64_t d = normalize_axis(dim, x.ndim(), op);
  const int64_t n = x.dim(d);
  TS_CHECK(index >= -n && index < n, IndexError, op, ": index ", index,
           " out of range for dimension ", dim, " of size ", n);
  IndexKey key = leading_full_slices(d);
  IndexItem at;
  at.start = index;
  key.push_back(at);
  return scatter_into(op, x, key, src);
}

Tensor slice_scatter(const Tensor& x, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  const char* op = "slice_scatter";
  TS_CHECK(step > 0, ValueError, op, ": step must be positive, got ", step);
  const int64_t d = normalize_axis(dim, std::max<int64_t>(x.ndim(), 1), op);
  IndexKey key = leading_full_slices(d);
  IndexItem s;
  s.kind = IndexItem::Slice;
  s.start = start.value_or(0);
  s.stop = end.value_or(INT64_MAX);
  s.step = step;
  key.push_back(s);
  return scatter_into(op, x, key, src);
}

Tensor diagonal_scatter(const Tensor& x, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2) {
  const char* op = "diagonal_scatter";
  Tensor out = clone_op(x);
  const Tensor view = diagonal(out, offset, dim1, dim2);
  TS_CHECK(src.shape() == view.shape(), RuntimeError, op,
           ": expected src to have a size equal to the diagonal of self, src size = ",
           shape_str(src.shape()), ", diagonal size = ", shape_str(view.shape()));
  IndexItem all;
  all.kind = IndexItem::Ellipsis;
  index_put_basic(view, IndexKey(1, all), src);
  return out;
}

Tensor nonzero_static(const Tensor& x, int64_t size, int64_t fill_value) {
  const char* op = "nonzero_static";
  TS_CHECK(size >= 0, ValueError, op, ": size must be non-negative, got ", size);
  const Tensor nz = nonzero(x);
  const int64_t k = nz.dim(0);
  if (k >= size) return clone(slice(nz, 0, 0, size, 1));
  Tensor pad = Tensor::empty({size - k, x.ndim()}, DType::Int64, nz.device());
  fill_(pad, Scalar::from_int(fill_value));
  return concat({nz, pad}, 0);
}

Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis) {
  const char* op = "take";
  TS_CHECK(is_integral(indices.dtype()), TypeError, op, ": indices must be an integer tensor, got ",
           dtype_name(indices.dtype()));
  const Tensor xx = !axis ? reshape(x, {-1}) : x.ndim() == 0 ? reshape(x, {1}) : x;
  const int64_t a = axis ? normalize_axis(*axis, xx.ndim(), op) : 0;
  AdvKey key;
  for (const IndexItem& it : leading_full_slices(a)) key.push_back(AdvItem{it, Tensor()});
  key.push_back(AdvItem{{}, indices});
  return named(op, [&] { return index_advanced(xx, key); });
}

}  // namespace ts

namespace ts {

Tensor as_strided_scatter(const Tensor& x, const Tensor& src, const Shape& size,
                          const Strides& stride, std::optional<int64_t> offset) {
  const char* op = "as_strided_scatter";
  TS_CHECK(size.size() == stride.size(), RuntimeError, op, ": mismatch in length of strides and ",
           "shape (size ", shape_str(size), ", stride ", shape_str(stride), ")");
  const bool grad = autograd::needs_grad({&x, &src});
  TS_CHECK(!grad || !autograd::requires_grad(x) || x.is_contiguous(), RuntimeError, op,
           ": is currently only supported for contiguous inputs that require grad (got shape ",
           shape_str(x.shape()), ", strides ", shape_str(x.strides()),
           "); hint: call .contiguous() first");
  Tensor out = empty_preserving_layout(x, x.dtype(), x.device());
  const int64_t off = offset.value_or(out.offset());
  TS_CHECK(off >= 0, RuntimeError, op, ": Negative storage offset ", off);
  check_in_storage(size, stride, off, out.itemsize(), out.storage()->nbytes, op);
  const Tensor view = out.as_strided(size, stride, off);
  TS_CHECK(view.shape() == src.shape(), RuntimeError, op,
           ": expected src to have a size equal to the slice of self. src size = ",
           shape_str(src.shape()), ", slice size = ", shape_str(view.shape()));
  check_same_device(op, x, src);
  {
    const autograd::GradModeGuard no_grad(false);
    copy_(out, x);
    copy_(view, src);
  }
  if (grad) autograd::record_as_strided_scatter(x, src, out, size, stride, off);
  return out;
}

Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self, const char* op) {
  TS_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
           RuntimeError, op, "(): Expected reduce to be one of prod, mean, amax or amin but got ",
           reduce, ".");
  TS_CHECK(index.ndim() <= 1, IndexError, op, "(): Index is supposed to be a vector, got shape ",
           shape_str(index.shape()));
  TS_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, RuntimeError, op,
           "(): Expected a long or int tensor for index, but got ", dtype_name(index.dtype()));
  TS_CHECK(x.dtype() == source.dtype(), RuntimeError, op, "(): self (", dtype_name(x.dtype()),
           ") and source (", dtype_name(source.dtype()),
           ") must have the same scalar type; hint: convert source with .to(self.dtype)");
  const int64_t d = normalize_axis(dim, std::max<int64_t>(x.ndim(), 1), op);
  const int64_t n = index.numel();
  TS_CHECK(source.ndim() == x.ndim() || (source.ndim() <= 1 && x.ndim() <= 1), RuntimeError, op,
           "(): source (shape ", shape_str(source.shape()), ") and self (shape ",
           shape_str(x.shape()), ") must have the same number of dimensions");
  const Shape sshape = source.ndim() == 0 ? Shape{1} : source.shape();
  TS_CHECK(sshape[d] == n, RuntimeError, op, "(): Number of indices (", n,
           ") should be equal to source.size(dim) (", sshape[d], ")");
  for (int64_t i = 0; i < x.ndim(); ++i)
    TS_CHECK(i == d || sshape[i] == x.dim(i), RuntimeError, op, "(): source (shape ",
             shape_str(source.shape()), ") must match self (shape ", shape_str(x.shape()),
             ") in every dim but ", d);
  const Tensor src = source.ndim() == 0 ? reshape(source, Shape{1}) : source;
  Shape ishape(src.ndim(), 1);
  ishape[d] = n;
  // PyTorch's index_reduce takes no negative indices
  const Tensor in = index_in_range(op, index, d, x.ndim() ? x.dim(d) : 1, false);
  const Tensor idx = broadcast_to(reshape(astype(in, DType::Int64, false), ishape), src.shape());
  return scatter_reduce(x, d, idx, src, scatter_reduce_op(reduce, op), include_self);
}

Tensor fill_diagonal(const Tensor& x, const Scalar& value, bool wrap) {
  const char* op = "fill_diagonal_";
  TS_CHECK(x.ndim() >= 2, RuntimeError, op, ": dimensions must larger than 1 (got shape ",
           shape_str(x.shape()), ")");
  for (int64_t d = 1; d < x.ndim() && x.ndim() > 2; ++d)
    TS_CHECK(x.dim(d) == x.dim(0), RuntimeError, op,
             ": all dimensions of input must be of equal length (got shape ", shape_str(x.shape()),
             ")");
  const int64_t rows = x.dim(0), cols = x.dim(1);
  std::vector<int64_t> r, c;
  if (x.ndim() > 2 || !wrap || rows <= cols || cols == 0) {
    for (int64_t i = 0; i < std::min(rows, cols); ++i) r.push_back(i);
    c = r;
  } else {
    for (int64_t flat = 0; flat < rows * cols; flat += cols + 1) {
      r.push_back(flat / cols);
      c.push_back(flat % cols);
    }
  }
  const auto n = static_cast<int64_t>(r.size());
  if (n == 0) return x;
  auto as_tensor = [&](const std::vector<int64_t>& v) {
    Tensor t = Tensor::empty(Shape{n}, DType::Int64);
    std::copy(v.begin(), v.end(), reinterpret_cast<int64_t*>(t.data_ptr()));
    return to_device(t, x.device());
  };
  const Tensor ri = as_tensor(r), ci = as_tensor(c);
  std::vector<Tensor> idx(x.ndim(), ri);
  idx[1] = ci;
  Tensor v = Tensor::empty(Shape{}, x.dtype(), x.device());
  fill_(v, value);
  return index_put(x, idx, v, false, op);
}

std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape) {
  const char* op = "unravel_index";
  TS_CHECK(is_integral(indices.dtype()) && !is_bool(indices.dtype()), TypeError,
           "expected 'indices' to be integer dtype, but got ", dtype_name(indices.dtype()));
  for (int64_t s : shape)
    TS_CHECK(s >= 0, ValueError, op, ": 'shape' cannot have negative values, but got ",
             shape_str(shape));
  Tensor idx = astype(indices, DType::Int64, false);
  std::vector<Tensor> out(shape.size());
  for (auto i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    const int64_t s = shape[i];
    if (s == 0) {
      out[i] = idx;
      continue;
    }
    const Tensor st = scalar_tensor(Scalar::from_int(s), DType::Int64);
    out[i] = binary_op(remainder_def, idx, st);
    idx = binary_op(floor_divide_def, idx, st);
  }
  return out;
}

}  // namespace ts
