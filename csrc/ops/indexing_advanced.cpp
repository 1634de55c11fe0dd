#include "ops/indexing_advanced.h"

#include <algorithm>
#include <vector>

#include "autograd/function.h"
#include "autograd/record.h"
#include "core/device_backend.h"
#include "core/scalar_range.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts {

TS_DEFINE_STUB(OffsetCopyKernel, offset_copy_stub, "index");
TS_DEFINE_STUB(PutAddKernel, put_add_stub, "scatter_add");
TS_DEFINE_STUB(IndexOffsetsKernel, index_offsets_stub, "index");
TS_DEFINE_STUB(DimOffsetsKernel, dim_offsets_stub, "gather");
TS_DEFINE_STUB(GatherDimKernel, gather_dim_stub, "gather");
TS_DEFINE_STUB(ScatterAddDimKernel, scatter_add_dim_stub, "scatter_add");
TS_DEFINE_STUB(NonzeroKernel, nonzero_stub, "nonzero");
TS_DEFINE_STUB(MaskBlockStartsKernel, mask_block_starts_stub, "index");
TS_DEFINE_STUB(MaskCopyKernel, mask_copy_stub, "index");
TS_DEFINE_STUB(IndexRangeCheckKernel, index_range_check_stub, "index");

bool is_basic(const AdvKey& key) {
  for (const AdvItem& it : key)
    if (it.array.defined()) return false;
  return true;
}

// On a device the kernel synchronizes once: the count of true elements is the output's shape.
Tensor nonzero(const Tensor& x) {
  Tensor m = contiguous(x.dtype() == DType::Bool ? x : astype(x, DType::Bool));
  return nonzero_stub.get(x.device())(m);
}

namespace {

IndexItem full_slice() {
  IndexItem s;
  s.kind = IndexItem::Slice;
  s.start = 0;
  s.stop = INT64_MAX;
  s.step = 1;
  return s;
}

Tensor as_index(const Tensor& a) {
  TS_CHECK(is_integral(a.dtype()), IndexError,
           "arrays used as indices must be of integer (or boolean) type, got ",
           dtype_name(a.dtype()));
  return index_as_int64(a, "index");
}

// Note [Advanced indexing plan]: the basic part of the key (slices, None, ...) is applied
// first as a view with every array's axis kept whole; each array then addresses one axis of
// that view (a k-d mask becomes k coordinate arrays, a 0-d bool a new axis indexed by [0] or
// [], and ints become 0-d arrays as in NumPy). All arrays broadcast to one shape B, and each
// position of B maps to an element offset in the view. The result is laid out as B in place
// of the indexed axes when they are adjacent in the key, else B first (NumPy's rule).
struct Plan {
  Tensor view;
  std::vector<Tensor> idx;    // int64 arrays
  std::vector<int64_t> dims;  // the view axis each array indexes
  std::vector<int64_t> axes;  // the axis of x it came from (error messages)
  Shape bshape;
  bool adjacent = true;
  Shape final_shape;
  std::vector<int64_t> rest_dims;  // view axes kept (in order)
  int64_t bpos = 0;                // where B starts in final_shape
};

Plan make_plan(const Tensor& x, const AdvKey& key) {
  int64_t consumed = 0;
  for (const AdvItem& it : key) {
    if (it.array.defined())
      consumed += it.array.dtype() == DType::Bool ? it.array.ndim() : 1;
    else if (it.item.kind == IndexItem::Int || it.item.kind == IndexItem::Slice)
      ++consumed;
  }
  TS_CHECK(consumed <= x.ndim(), IndexError, "too many indices for tensor: tensor is ", x.ndim(),
           "-dimensional, but ", consumed, " were indexed");
  Plan p;
  IndexKey basic;
  int64_t d = 0, od = 0;  // axis of x, axis of the view
  bool seen_ellipsis = false;
  auto add_array = [&](Tensor a, int64_t axis) {
    p.idx.push_back(std::move(a));
    p.dims.push_back(od++);
    p.axes.push_back(axis);
    basic.push_back(full_slice());
  };
  for (const AdvItem& it : key) {
    if (!it.array.defined()) {
      switch (it.item.kind) {
        case IndexItem::Int:
          add_array(scalar_tensor(Scalar::from_int(it.item.start), DType::Int64), d++);
          continue;
        case IndexItem::Slice:
          ++d, ++od;
          break;
        case IndexItem::NewAxis:
          ++od;
          break;
        case IndexItem::Ellipsis:
          TS_CHECK(!seen_ellipsis, IndexError, "an index can only have a single ellipsis ('...')");
          seen_ellipsis = true;
          d += x.ndim() - consumed;
          od += x.ndim() - consumed;
          break;
      }
      basic.push_back(it.item);
      continue;
    }
    const Tensor& a = it.array;
    if (a.dtype() != DType::Bool) {
      add_array(as_index(a), d++);
      continue;
    }
    if (a.ndim() == 0) {  // x[True] / x[False]: a new axis of length 1 or 0
      IndexItem na;
      na.kind = IndexItem::NewAxis;
      const bool v = item(a).to<bool>();
      p.idx.push_back(Tensor::empty({v ? 1 : 0}, DType::Int64));
      if (v) p.idx.back().data<int64_t>()[0] = 0;
      p.dims.push_back(od++);
      p.axes.push_back(d);
      basic.push_back(na);
      continue;
    }
    // NumPy lets a mask axis of length 0 stand for an axis of any length.
    for (int64_t j = 0; j < a.ndim(); ++j)
      TS_CHECK(a.dim(j) == 0 || a.dim(j) == x.dim(d + j), IndexError,
               "boolean index did not match indexed tensor along axis ", d + j,
               "; size of axis is ", x.dim(d + j), " but size of corresponding boolean axis is ",
               a.dim(j));
    const Tensor coords = nonzero(a);  // (count, k)
    for (int64_t j = 0; j < a.ndim(); ++j) add_array(select(coords, 1, j), d++);
  }
  p.view = index_basic(x, basic);
  for (size_t i = 1; i < p.dims.size(); ++i)
    if (p.dims[i] != p.dims[0] + static_cast<int64_t>(i)) p.adjacent = false;
  for (size_t i = 0; i < p.idx.size(); ++i) {
    if (i == 0) {
      p.bshape = p.idx[0].shape();
      continue;
    }
    try {
      p.bshape = broadcast_shapes(p.bshape, p.idx[i].shape(), "index");
    } catch (const ValueError&) {
      std::string shapes;
      for (const Tensor& t : p.idx) shapes += shape_str(t.shape()) + " ";
      throw IndexError(
          str("shape mismatch: indexing arrays could not be broadcast together with "
              "shapes ",
              shapes));
    }
  }
  const int64_t m = p.dims.size();
  for (int64_t v = 0; v < p.view.ndim(); ++v)
    if (v < p.dims[0] || v >= p.dims[0] + m || !p.adjacent) {
      bool adv = false;
      for (int64_t dd : p.dims) adv |= dd == v;
      if (!adv) p.rest_dims.push_back(v);
    }
  p.bpos = p.adjacent ? p.dims[0] : 0;
  for (int64_t j = 0; j < static_cast<int64_t>(p.rest_dims.size()); ++j) {
    if (j == p.bpos)
      for (int64_t s : p.bshape) p.final_shape.push_back(s);
    p.final_shape.push_back(p.view.dim(p.rest_dims[j]));
  }
  if (p.bpos == static_cast<int64_t>(p.rest_dims.size()))
    for (int64_t s : p.bshape) p.final_shape.push_back(s);
  return p;
}

[[noreturn]] void throw_out_of_range(const Plan& p, size_t k, const Tensor& ik, int64_t bad) {
  throw IndexError(str("index ", ik.data<int64_t>()[bad], " is out of bounds for axis ", p.axes[k],
                       " with size ", p.view.dim(p.dims[k])));
}

// How positions of B address p.view: one index array used directly (the common x[idx]), or
// a table of element offsets summed over all arrays. Out-of-range indices raise IndexError;
// a single index is validated here only when `validate` (gather checks it in the kernel).
struct Addressing {
  std::vector<int64_t> off;
  Tensor single;
};

Addressing plan_addressing(const Plan& p, bool validate) {
  const int64_t nb = numel_of(p.bshape);
  Addressing a;
  // Index arrays are on the host (Note [CUDA advanced indexing]): the CPU computes offsets.
  const auto offsets = index_offsets_stub.get(Device{});
  if (p.idx.size() == 1 && nb > 0) {
    a.single = contiguous(p.idx[0]);
    if (!validate) return a;
    const int64_t bad = offsets(a.single, p.view.dim(p.dims[0]), 0, nullptr);
    if (bad >= 0) throw_out_of_range(p, 0, a.single, bad);
    return a;
  }
  a.off.assign(nb, 0);
  for (size_t k = 0; k < p.idx.size(); ++k) {
    // With an empty broadcast NumPy checks only the scalar indices (ints, 0-d arrays).
    if (nb == 0 && p.idx[k].ndim() != 0) continue;
    const Tensor ik = contiguous(nb == 0 ? p.idx[k] : broadcast_to(p.idx[k], p.bshape));
    const int64_t bad = offsets(ik, p.view.dim(p.dims[k]), p.view.strides()[p.dims[k]],
                                nb == 0 ? nullptr : a.off.data());
    if (bad >= 0) throw_out_of_range(p, k, ik, bad);
  }
  return a;
}

// The (B, rest) description of a tensor `y` of the final shape: B's positions must collapse
// to one stride; returns false when they do not.
bool describe_y(const Plan& p, const Tensor& y, OffsetCopy& c) {
  const int64_t nbd = p.bshape.size();
  int64_t s = 0, prod = 1;
  bool found = false;
  for (int64_t i = nbd - 1; i >= 0; --i) {
    const int64_t size = y.dim(p.bpos + i), st = y.strides()[p.bpos + i];
    if (size == 1) continue;
    if (!found) {
      s = st;
      found = true;
    } else if (st != s * prod) {
      return false;
    }
    prod *= size;
  }
  c.y = y.data_ptr();
  c.y_bstride = s;
  c.y_rest.clear();
  for (int64_t j = 0; j < static_cast<int64_t>(p.rest_dims.size()); ++j)
    c.y_rest.push_back(y.strides()[j < p.bpos ? j : j + nbd]);
  return true;
}

OffsetCopy base_copy(const Plan& p, const Addressing& a) {
  OffsetCopy c;
  c.x = p.view.data_ptr();
  c.n = numel_of(p.bshape);
  if (a.single.defined()) {
    c.index = a.single.data<int64_t>();
    c.index_size = p.view.dim(p.dims[0]);
    c.index_stride = p.view.strides()[p.dims[0]];
  } else {
    c.offsets = a.off.data();
  }
  c.itemsize = p.view.itemsize();
  for (int64_t v : p.rest_dims) {
    c.rest.push_back(p.view.dim(v));
    c.x_rest.push_back(p.view.strides()[v]);
  }
  return c;
}

}  // namespace

namespace {
// x[mask] with a mask of x's full shape over a contiguous x: a direct compress.
bool is_full_mask(const Tensor& x, const AdvKey& key) {
  if (key.size() != 1 || !key[0].array.defined()) return false;
  const Tensor& m = key[0].array;
  return m.dtype() == DType::Bool && m.ndim() >= 1 && m.shape() == x.shape() && x.is_contiguous();
}
}  // namespace

namespace {
// Note [CUDA advanced indexing]: the common cases address x straight from index arrays that
// are already on x's device, with no host round trip: x[idx], x[:, idx], x[rows, cols],
// x[0, idx] (integer arrays and ints, up to kMaxDeviceIndexArrays), take, index_select,
// gather / take_along_axis, and scatter_add (the backward of all of these). Their kernels wrap
// negative indices like the CPU, clamp an out-of-range one (so nothing is read or written out
// of bounds) and report it as a deferred device error (cuda/device_error.h): IndexError at the
// next synchronization instead of at the call. Everything else (boolean masks, setitem,
// scatter without add, host index arrays) is planned and bounds-checked on the host, which
// copies the index arrays there; only the element copy then runs on the device, which
// receives the positions' offsets.
bool device_addressing(const Tensor& x, const AdvKey& key) {
  if (x.device().is_cpu()) return false;
  bool any = false;
  for (const AdvItem& it : key) {
    if (!it.array.defined()) continue;
    const Tensor& a = it.array;
    if (!is_integral(a.dtype()) || a.device() != x.device()) return false;
    any = true;
  }
  return any;
}

// x[key] as a gather addressed by the device index arrays of plan p (the key's ints, host
// values, are checked here like on the CPU). False when the plan exceeds the kernel's limits
// or NumPy would check a device index of an empty selection: the host path runs then.
bool index_on_device(const Tensor& x, const Plan& p, Tensor& out) {
  const int64_t nb = numel_of(p.bshape);
  if (static_cast<int64_t>(p.idx.size()) > kMaxDeviceIndexArrays ||
      static_cast<int64_t>(p.bshape.size()) > kMaxDeviceIndexDims)
    return false;
  OffsetCopy c;
  for (size_t k = 0; k < p.idx.size(); ++k) {
    const Tensor& a = p.idx[k];
    OffsetCopy::DeviceIndex di;
    di.size = p.view.dim(p.dims[k]);
    di.stride = p.view.strides()[p.dims[k]];
    if (a.device().is_cpu()) {  // an int of the key
      di.value = a.data<int64_t>()[0];
      const int64_t i = di.value < 0 ? di.value + di.size : di.value;
      if (i < 0 || i >= di.size) throw_out_of_range(p, k, a, 0);
    } else {
      if (nb == 0 && a.ndim() == 0) return false;
      di.data = a.data<int64_t>();
      di.bstrides = broadcast_to(a, p.bshape).strides();
    }
    c.device_indices.push_back(std::move(di));
  }
  out = Tensor::empty(p.final_shape, x.dtype(), x.device());
  if (nb == 0) return true;
  c.bshape = p.bshape;
  c.x = p.view.data_ptr();
  c.n = nb;
  c.itemsize = p.view.itemsize();
  for (int64_t v : p.rest_dims) {
    c.rest.push_back(p.view.dim(v));
    c.x_rest.push_back(p.view.strides()[v]);
  }
  describe_y(p, out, c);  // always collapses: out is contiguous
  offset_copy_stub.get(x.device())(c, false);
  return true;
}

AdvKey host_key(const AdvKey& key) {
  AdvKey k = key;
  for (AdvItem& it : k)
    if (it.array.defined()) it.array = to_device(it.array, Device{});
  return k;
}

Tensor index_advanced_plain(const Tensor& x, const AdvKey& key_in) {
  if (device_addressing(x, key_in)) {
    Tensor out;
    if (index_on_device(x, make_plan(x, key_in), out)) return out;
  }
  const AdvKey key = x.device().is_cpu() ? key_in : host_key(key_in);
  if (x.device().is_cpu() && is_full_mask(x, key)) {
    const Tensor m = contiguous(key[0].array);
    const std::vector<int64_t> start = mask_block_starts_stub.get(x.device())(m);
    Tensor out = Tensor::empty({start.back()}, x.dtype(), x.device());
    if (out.numel()) mask_copy_stub.get(x.device())(x, m, start, out.data_ptr(), 1, false);
    return out;
  }
  const Plan p = make_plan(x, key);
  const bool empty = numel_of(p.final_shape) == 0;
  const Addressing a = plan_addressing(p, empty);
  Tensor out = Tensor::empty(p.final_shape, x.dtype(), x.device());
  if (empty) return out;
  OffsetCopy c = base_copy(p, a);
  describe_y(p, out, c);  // always collapses: out is contiguous
  const int64_t bad = offset_copy_stub.get(x.device())(c, false);
  if (bad >= 0) throw_out_of_range(p, 0, a.single, bad);
  return out;
}
}  // namespace

Tensor index_advanced(const Tensor& x, const AdvKey& key) {
  Tensor out = index_advanced_plain(x, key);
  if (autograd::needs_grad({&x})) autograd::record_index_advanced(x, out, key);
  return out;
}

namespace {
void check_writable(const Tensor& x, const char* op) {
  TS_CHECK(!x.storage()->readonly, ValueError, op,
           ": the destination tensor is read-only (it shares memory with a read-only buffer)");
}
}  // namespace

void index_put_advanced_plain(const Tensor& x, const AdvKey& key, const Tensor& value);

void index_put_advanced(const Tensor& x, const AdvKey& key, const Tensor& value) {
  const bool record = autograd::begin_setitem(x, value);
  {
    autograd::GradModeGuard no_grad(false);
    index_put_advanced_plain(x, key, value);
  }
  if (record) autograd::record_index_put_advanced(x, value, key);
}

void index_put_advanced_plain(const Tensor& x, const AdvKey& key_in, const Tensor& value_in) {
  check_writable(x, "setitem");
  // A value from another device (a CPU tensor into a CUDA one) is moved first, like copy_.
  const Tensor value = to_device(value_in, x.device());
  const AdvKey key = x.device().is_cpu() ? key_in : host_key(key_in);
  if (x.device().is_cpu() && is_full_mask(x, key) && value.ndim() <= 1) {
    const Tensor m = contiguous(key[0].array);
    const std::vector<int64_t> start = mask_block_starts_stub.get(x.device())(m);
    const int64_t count = start.back();
    TS_CHECK(value.numel() == 1 || value.numel() == count, ValueError,
             "setitem: could not broadcast a value of shape ", shape_str(value.shape()),
             " into a selection of shape (", count, ",)");
    if (count == 0) return;
    Tensor v = contiguous(astype(value, x.dtype(), false));
    if (v.storage() == x.storage()) v = clone(v);
    x.bump_version();
    mask_copy_stub.get(x.device())(x, m, start, v.data_ptr(), v.numel() == 1 ? 0 : 1, true);
    return;
  }
  const Plan p = make_plan(x, key);
  const Addressing a = plan_addressing(p, true);
  Tensor v = astype(value, x.dtype(), false);
  const int64_t fd = p.final_shape.size();
  if (v.ndim() > fd) {  // NumPy accepts extra leading size-1 dims on the value
    for (int64_t i = 0; i < v.ndim() - fd; ++i)
      TS_CHECK(v.dim(i) == 1, ValueError, "setitem: could not broadcast a value of shape ",
               shape_str(value.shape()), " into a selection of shape ", shape_str(p.final_shape));
    v = reshape(v, p.final_shape);
  }
  try {
    v = broadcast_to(v, p.final_shape);
  } catch (const ValueError&) {
    throw ValueError(str("setitem: could not broadcast a value of shape ", shape_str(value.shape()),
                         " into a selection of shape ", shape_str(p.final_shape)));
  }
  if (numel_of(p.final_shape) == 0) return;
  if (v.storage() == x.storage() || v.data_ptr() == x.data_ptr()) v = clone(v);
  OffsetCopy c = base_copy(p, a);
  if (!describe_y(p, v, c)) {
    v = contiguous(v);
    describe_y(p, v, c);
  }
  x.bump_version();
  offset_copy_stub.get(x.device())(c, true);
}

namespace {
// PyTorch's RuntimeError for a gather/scatter index outside [0, size): these ops take no
// negative indices (x[idx], take and take_along_dim with a dim do).
void check_dim_index(const char* op, const Tensor& ic, int64_t bad, int64_t dim, int64_t size) {
  TS_CHECK(bad < 0, RuntimeError, op, ": index ", bad < 0 ? 0 : ic.data<int64_t>()[bad],
           " is out of bounds for dimension ", dim, " with size ", size,
           "; hint: indices must be in [0, ", size, ") (no negative indices)");
}

// Validates torch.gather/scatter's index against x (and src), returning a contiguous int64
// copy and the element offsets of each of its positions into x.
// With `on_device` the index stays on x's device and no offsets are computed (the kernel
// addresses x from it: Note [CUDA advanced indexing]).
Tensor dim_index(const char* op, const Tensor& x, int64_t& dim, const Tensor& index,
                 const Tensor* src, std::vector<int64_t>* off, bool on_device = false) {
  TS_CHECK(is_integral(index.dtype()), TypeError, op, ": index must be an integer tensor, got ",
           dtype_name(index.dtype()));
  const int64_t nd = std::max<int64_t>(x.ndim(), 1);
  dim = normalize_axis(dim, nd, op);
  Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  Tensor ix = index.ndim() == 0 && x.ndim() <= 1 ? reshape(index, {1}) : index;
  TS_CHECK(ix.ndim() == xx.ndim(), ValueError, op, ": index ", shape_str(index.shape()),
           " must have as many dims as input ", shape_str(x.shape()));
  for (int64_t d = 0; d < xx.ndim(); ++d) {
    TS_CHECK(d == dim || ix.dim(d) <= xx.dim(d), ValueError, op, ": index ",
             shape_str(index.shape()), " is larger than input ", shape_str(x.shape()), " in dim ",
             d);
    if (src)
      TS_CHECK(src->ndim() == 0 || ix.dim(d) <= src->dim(d), ValueError, op, ": index ",
               shape_str(index.shape()), " is larger than src ", shape_str(src->shape()),
               " in dim ", d);
  }
  const Tensor ic = contiguous(index_as_int64(on_device ? ix : to_device(ix, Device{}), op));
  if (!off || ic.numel() == 0) return ic;
  off->assign(ic.numel(), 0);
  const int64_t bad = dim_offsets_stub.get(Device{})(ic, dim, xx, off->data());
  check_dim_index(op, ic, bad, dim, xx.dim(dim));
  return ic;
}
// Element-wise gather (y[b] = x[off[b]]) or put (x[off[b]] = y[b]) with a contiguous y.
void copy_by_offsets(const Tensor& x, const std::vector<int64_t>& off, const Tensor& y, bool put) {
  OffsetCopy c;
  c.x = x.data_ptr();
  c.offsets = off.data();
  c.n = off.size();
  c.y = y.data_ptr();
  c.y_bstride = 1;
  c.itemsize = x.itemsize();
  offset_copy_stub.get(x.device())(c, put);
}
}  // namespace

Tensor scatter_offsets(const char* op, const Tensor& x, int64_t& dim, const Tensor& index,
                       const Tensor* src, std::vector<int64_t>& off) {
  return dim_index(op, x, dim, index, src, &off);
}

// gather / scatter_add from an index already on x's device (Note [CUDA advanced indexing]).
bool device_addressing(const Tensor& x, const Tensor& index) {
  return !x.device().is_cpu() && index.device() == x.device();
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const bool host = x.device().is_cpu(), on_device = device_addressing(x, index);
  std::vector<int64_t> off;
  // The kernel walks the index itself on the CPU and from a device index; a host index of
  // device data gets its offsets computed (and checked) on the host.
  const Tensor ic =
      dim_index("gather", x, dim, index, nullptr, host || on_device ? nullptr : &off, on_device);
  Tensor out = Tensor::empty(index.shape(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  if (host || on_device) {
    const int64_t bad = gather_dim_stub.get(x.device())(xx, dim, ic, out);
    check_dim_index("gather", ic, bad, dim, xx.dim(dim));
  } else {
    copy_by_offsets(xx, off, out, false);
  }
  if (autograd::needs_grad({&x}) && x.ndim() > 0)
    autograd::record_gather(x, out, normalize_axis(dim, x.ndim(), "gather"), index);
  return out;
}

void scatter_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
  if (!x.device().is_cpu()) check_same_device(add ? "scatter_add" : "scatter", x, src);
  const char* op = add ? "scatter_add" : "scatter";
  autograd::check_inplace(x, op);
  check_writable(x, op);
  check_no_internal_overlap(x, op);
  if (autograd::needs_grad({&x, &src})) {
    // Recorded like x = scatter(x, ...) written in place (PyTorch's in-place rules).
    assign_inplace_result(op, x, scatter(x, dim, index, src, add));
    return;
  }
  TS_CHECK(src.ndim() == 0 || src.ndim() == std::max<int64_t>(index.ndim(), 1) ||
               src.ndim() == index.ndim(),
           ValueError, op, ": src ", shape_str(src.shape()), " must have as many dims as index ",
           shape_str(index.shape()));
  std::vector<int64_t> off;
  const bool on_device = add && device_addressing(x, index);
  const Tensor ic = dim_index(op, x, dim, index, &src, on_device ? nullptr : &off, on_device);
  if (ic.numel() == 0) return;
  // The part of src that index addresses, in x's dtype, as a contiguous block.
  Tensor s = astype(src, x.dtype(), false);
  // A 0-d CPU src mixes with device tensors like a scalar; the kernels read device memory.
  if (s.device() != x.device()) s = to_device(s, x.device(), false);
  if (s.ndim() == 0) {
    s = broadcast_to(s, ic.shape());
  } else {
    if (s.ndim() != ic.ndim()) s = reshape(s, ic.shape());
    for (int64_t d = 0; d < ic.ndim(); ++d) s = slice(s, d, 0, ic.dim(d), 1);
  }
  s = clone(s);
  x.bump_version();
  const Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  if (on_device) {  // atomics: Note [CUDA scatter_add] in cuda/index_kernels.cu
    scatter_add_dim_stub.get(x.device())(xx, dim, ic, s);
    return;
  }
  if (add) {
    put_add_stub.get(x.device())(xx, off.data(), s);
    return;
  }
  copy_by_offsets(x, off, s, true);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
  Tensor out = clone(x);
  {
    autograd::GradModeGuard no_grad(false);
    scatter_(out, dim, index, src, add);
  }
  if (autograd::needs_grad({&x, &src}) && x.ndim() > 0)
    autograd::record_scatter(x, src, out, normalize_axis(dim, x.ndim(), "scatter"), index, add);
  return out;
}

namespace {

// index_in_range without negative indices, its IndexError raised as a RuntimeError where
// PyTorch's kernel raises that class.
Tensor index_in_bounds(const char* op, const Tensor& index, int64_t dim, int64_t n,
                       bool runtime_error) {
  try {
    return index_in_range(op, index, dim, n, false);
  } catch (const IndexError& e) {
    if (!runtime_error) throw;
    throw RuntimeError(e.what());
  }
}

}  // namespace

Tensor index_as_int64(const Tensor& index, const char* op) {
  const Tensor i = astype(index, DType::Int64, false);
  if (index.dtype() == DType::UInt64 && i.numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    const Tensor wrapped = binary_op(less_def, i, scalar_tensor(Scalar::from_int(0), i.dtype()));
    TS_CHECK(item(any(wrapped, std::nullopt, false)).i == 0, IndexError, op,
             ": a uint64 index of 2**63 or more is out of bounds (indices must fit in int64)");
  }
  return i;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  TS_CHECK(index.ndim() <= 1, ValueError, "index_select: index must be 0-d or 1-d, got shape ",
           shape_str(index.shape()));
  TS_CHECK(is_integral(index.dtype()), TypeError,
           "index_select: index must be an integer tensor, got ", dtype_name(index.dtype()));
  // PyTorch's index_select takes no negative indices (x[idx] does): IndexError, RuntimeError
  // along dim 1 (torch's fast path there)
  if (x.ndim() == 0) {
    dim = normalize_axis(dim, 1, "index_select");
    const Tensor idx = index_in_bounds("index_select", index, dim, 1, false);
    return reshape(index_advanced(reshape(x, {1}), {AdvItem{{}, idx}}), {});
  }
  dim = normalize_axis(dim, x.ndim(), "index_select");
  AdvKey key(dim, AdvItem{full_slice(), Tensor()});
  key.push_back(AdvItem{{}, index_in_bounds("index_select", index, dim, x.dim(dim), dim == 1)});
  return index_advanced(x, key);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  TS_CHECK(index.ndim() <= 1, ValueError, "index_add: index must be 0-d or 1-d, got shape ",
           shape_str(index.shape()));
  const int64_t nd = std::max<int64_t>(x.ndim(), 1);
  dim = normalize_axis(dim, nd, "index_add");
  Tensor xx = x.ndim() == 0 ? reshape(x, {1}) : x;
  Tensor src = source.ndim() == 0 ? reshape(source, {1}) : source;
  Shape expect = xx.shape();
  expect[dim] = index.numel();
  TS_CHECK(src.shape() == expect, ValueError, "index_add: source ", shape_str(source.shape()),
           " must have shape ", shape_str(expect), " (input's shape with dim ", dim,
           " of the index's length)");
  // PyTorch's index_add takes no negative indices (IndexError; RuntimeError along the first or
  // last dim from 2-D on, where torch checks it in a scatter_add); it is scatter_add with the
  // index spread across the other dims.
  const Tensor idx = index_in_bounds("index_add", index, dim, xx.dim(dim),
                                     x.ndim() >= 2 && (dim == 0 || dim == x.ndim() - 1));
  Shape ishape(xx.ndim(), 1);
  ishape[dim] = idx.numel();
  Tensor spread = broadcast_to(reshape(idx, ishape), expect);
  Tensor out = scatter(xx, dim, spread, src, true);
  return x.ndim() == 0 ? reshape(out, {}) : out;
}

Tensor index_in_range(const char* op, const Tensor& index, int64_t dim, int64_t n,
                      bool negative_ok) {
  const Tensor idx = reshape(index, {-1});
  autograd::GradModeGuard no_grad(false);
  const int64_t lo = negative_ok ? -n : 0;
  const Device dev = idx.device();
  bool negative = negative_ok;  // unknown on a device: the where below runs there
  if (dev.is_cpu()) {
    const Tensor c = contiguous(index_as_int64(idx, op));
    const int64_t* p = c.data<int64_t>();
    negative = false;
    for (int64_t k = 0; k < c.numel(); ++k) {
      TS_CHECK(p[k] >= lo && p[k] < n, IndexError, op, ": index ", p[k],
               " is out of bounds for dimension ", dim, " with size ", n,
               " (index out of range in self); hint: indices must be in [", lo, ", ", n, ")");
      negative = negative || p[k] < 0;
    }
  } else if (idx.numel() > 0) {
    // KernelStub::get raises NotImplementedError for a device without the kernel.
    index_range_check_stub.get(dev)(contiguous(index_as_int64(idx, op)), lo, n, op);
  }
  if (!negative) return idx;
  const Tensor nn = scalar_tensor(Scalar::from_int(n), idx.dtype());
  return where(binary_op(less_def, idx, scalar_tensor(Scalar::from_int(0), idx.dtype())),
               add(idx, nn), idx);
}

namespace {

// index_fill / index_copy's index: an integer vector.
void check_index_vector(const char* op, const Tensor& index) {
  TS_CHECK(is_integral(index.dtype()), RuntimeError, op, ": index must be an integer tensor, got ",
           dtype_name(index.dtype()), "; hint: pass an int64 tensor of indices");
  TS_CHECK(index.ndim() <= 1, IndexError, op, ": index must be a vector (at most 1-D), got ",
           index.ndim(), "-D of shape ", shape_str(index.shape()));
}

}  // namespace

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value) {
  const char* op = "index_fill";
  const int64_t d = normalize_axis(dim, std::max<int64_t>(x.ndim(), 1), op);
  TS_CHECK(value.ndim() == 0, RuntimeError, op,
           ": only supports a 0-dimensional value tensor, but got tensor with ", value.ndim(),
           " dimension(s); hint: use index_copy for a tensor of values");
  // a Python number must fit x's dtype (Note [Checked scalar writes]): 300 into uint8 wrapped
  if (value.is_wrapped_number()) check_scalar_fits(item(value), x.dtype(), op);
  const int64_t n = x.ndim() ? x.dim(d) : 1;
  check_index_vector(op, index);
  const Tensor idx = index_in_range(op, index, d, n, true);
  Tensor hit = Tensor::empty({n}, DType::Bool, x.device());
  {
    autograd::GradModeGuard no_grad(false);
    fill_(hit, Scalar::from_bool(false));
    if (idx.numel() > 0)
      index_put_advanced(hit, {AdvItem{{}, idx}},
                         scalar_tensor(Scalar::from_bool(true), DType::Bool));
  }
  Shape shape(std::max<int64_t>(x.ndim(), 1), 1);
  shape[d] = n;
  hit = reshape(hit, x.ndim() ? shape : Shape{});
  Tensor v = astype_op(value, x.dtype(), false);
  if (v.device() != x.device()) v = to_device(v, x.device());
  return where(hit, v, x);
}

Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy";
  const int64_t d = normalize_axis(dim, std::max<int64_t>(x.ndim(), 1), op);
  check_index_vector(op, index);
  TS_CHECK(source.dtype() == x.dtype(), RuntimeError, op, ": self (", dtype_name(x.dtype()),
           ") and source (", dtype_name(source.dtype()),
           ") must have the same dtype; hint: cast source with .to(self.dtype)");
  const int64_t k = index.numel();
  Shape expect = x.shape();
  if (x.ndim()) expect[d] = k;
  TS_CHECK(source.shape() == expect || (x.ndim() == 0 && source.numel() == 1), RuntimeError, op,
           ": source ", shape_str(source.shape()), " must have the shape of self ",
           shape_str(x.shape()), " with dim ", dim, " of size ", k);
  // PyTorch's index_copy takes no negative indices (index_fill does)
  const Tensor idx = index_in_range(op, index, d, x.ndim() ? x.dim(d) : 1, false);
  if (x.ndim() == 0) return clone_op(reshape(source, {}));
  if (k == 0) return clone_op(x);
  Shape ishape(x.ndim(), 1);
  ishape[d] = k;
  return scatter(x, d, broadcast_to(reshape(idx, ishape), expect), source, false);
}

Tensor scatter_permutation(const Tensor& perm, const Tensor& values) {
  TS_CHECK(perm.ndim() == 1 && values.ndim() == 1 && perm.dim(0) == values.dim(0), ValueError,
           "scatter_permutation: perm ", shape_str(perm.shape()), " and values ",
           shape_str(values.shape()), " must be 1-d of one length");
  TS_CHECK(perm.device() == values.device(), RuntimeError, "scatter_permutation: perm is on ",
           perm.device().str(), " but values on ", values.device().str());
  if (!values.device().is_cpu()) {
    // On a device the general scatter (checked indices, device kernels) does the same job.
    Tensor out = Tensor::empty(values.shape(), values.dtype(), values.device());
    fill_(out, Scalar::from_int(0));
    return scatter(out, 0, as_index(perm), values, false);
  }
  const Tensor p = contiguous(as_index(perm));
  const Tensor v = contiguous(values);
  const int64_t n = p.numel();
  Tensor out = Tensor::empty({n}, v.dtype(), v.device());
  if (n == 0) return out;
  const int64_t bad = index_offsets_stub.get(p.device())(p, n, 0, nullptr);
  TS_CHECK(bad < 0, IndexError, "scatter_permutation: index ", bad < 0 ? 0 : p.data<int64_t>()[bad],
           " is out of range for length ", n);
  // A repeated index (perm not a permutation) leaves some entries of out unwritten: start
  // from zeros so the result is still defined.
  if (n > 0) fill_(out, Scalar::from_int(0));
  OffsetCopy c;
  c.x = out.data_ptr();
  c.n = n;
  c.index = p.data<int64_t>();
  c.index_size = n;
  c.index_stride = 1;
  c.y = v.data_ptr();
  c.y_bstride = 1;
  c.itemsize = v.itemsize();
  c.distinct = true;
  offset_copy_stub.get(v.device())(c, true);
  return out;
}

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis,
                       bool negative_from_end) {
  TS_CHECK(x.ndim() == indices.ndim(), ValueError, "take_along_axis: indices ",
           shape_str(indices.shape()), " must have as many dims as x ", shape_str(x.shape()));
  TS_CHECK(x.ndim() > 0, ValueError, "take_along_axis: x must have at least one dimension");
  axis = normalize_axis(axis, x.ndim(), "take_along_axis");
  Shape xs = x.shape(), is = indices.shape();
  xs[axis] = 1;
  is[axis] = 1;
  Shape b = broadcast_shapes(xs, is, "take_along_axis");
  Shape bx = b, bi = b;
  bx[axis] = x.dim(axis);
  bi[axis] = indices.dim(axis);
  Tensor i = indices;
  if (negative_from_end && is_integral(i.dtype()) && i.numel() > 0) {
    autograd::GradModeGuard no_grad(false);
    const Tensor n = scalar_tensor(Scalar::from_int(x.dim(axis)), i.dtype());
    // only [-n, 0) moves, so an index below -n is reported as given
    const Tensor moves = binary_op(
        logical_and_def, binary_op(less_def, i, scalar_tensor(Scalar::from_int(0), i.dtype())),
        binary_op(greater_equal_def, i, negative(n)));
    i = where(moves, add(i, n), i);
  }
  return gather(broadcast_to(x, bx), axis, broadcast_to(i, bi));
}

}  // namespace ts
