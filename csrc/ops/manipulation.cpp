#include "ops/manipulation.h"

#include <algorithm>
#include <cstdlib>

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/copy.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(RepeatKernel, repeat_stub, "repeat");
TS_DEFINE_STUB(JoinKernel, join_stub, "concat");

namespace {
Tensor flatten_view(const Tensor& x) { return reshape(x, Shape{x.numel()}); }

DType common_dtype(const std::vector<Tensor>& xs) {
  DType d = xs[0].dtype();
  for (size_t i = 1; i < xs.size(); ++i) d = promote_types(d, xs[i].dtype());
  return d;
}

void check_same_device(const std::vector<Tensor>& xs, const char* op) {
  for (const Tensor& t : xs)
    TS_CHECK(t.device() == xs[0].device(), RuntimeError, op, ": tensors on different devices (",
             xs[0].device().str(), " and ", t.device().str(), ")");
}
// The dims of t from outermost (largest stride) to innermost. Size-1 dims have meaningless
// strides: they keep their places and only the other dims are sorted among their slots.
Shape stride_order(const Tensor& t) {
  Shape order, slots;
  for (int64_t d = 0; d < t.ndim(); ++d) {
    order.push_back(d);
    if (t.dim(d) != 1) slots.push_back(d);
  }
  Shape sorted = slots;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) {
    return std::abs(t.strides()[a]) > std::abs(t.strides()[b]);
  });
  for (int64_t i = 0; i < slots.size(); ++i) order[slots[i]] = sorted[i];
  return order;
}

// A fresh tensor of `shape` laid out in the inputs' common dim order (NumPy's concatenate does
// the same): joining transposed inputs then copies without a transpose. C order otherwise.
Tensor empty_in_layout_of(const std::vector<Tensor>& xs, const Shape& shape, DType dtype) {
  bool all_contiguous = true;  // the common case, without sorting strides
  for (const Tensor& t : xs) all_contiguous = all_contiguous && t.is_contiguous() && t.numel() > 0;
  if (all_contiguous) return Tensor::empty(shape, dtype, xs[0].device());
  const Shape order = stride_order(xs[0]);
  bool identity = true;
  for (int64_t i = 0; i < order.size(); ++i) identity = identity && order[i] == i;
  for (size_t i = 1; i < xs.size() && !identity; ++i) identity = !(stride_order(xs[i]) == order);
  if (identity) return Tensor::empty(shape, dtype, xs[0].device());
  Shape permuted, inverse(order.size());
  for (int64_t i = 0; i < order.size(); ++i) {
    permuted.push_back(shape[order[i]]);
    inverse[order[i]] = i;
  }
  return permute_dims(Tensor::empty(permuted, dtype, xs[0].device()), inverse);
}

// The join of contiguous inputs of out's dtype into a contiguous out is byte blocks moved in
// order (join_stub); false (nothing written) when the inputs need the strided, converting
// copy_ instead, or the device has no join kernel.
bool join_bytes(const Tensor& out, const std::vector<Tensor>& xs, int64_t outer) {
  if (out.numel() == 0) return true;
  const auto kernel = join_stub.table[static_cast<int>(out.device().type)];
  if (!kernel || !out.is_contiguous()) return false;
  for (const Tensor& t : xs)
    if (!t.is_contiguous() || t.dtype() != out.dtype()) return false;
  kernel(out, xs, outer);
  return true;
}
}  // namespace

Tensor concat(const std::vector<Tensor>& in, int64_t axis, bool axis_is_none) {
  TS_CHECK(!in.empty(), ValueError, "concat: need at least one tensor to concatenate");
  check_same_device(in, "concat");
  std::vector<Tensor> xs;
  xs.reserve(in.size());
  for (const Tensor& t : in) xs.push_back(axis_is_none ? flatten_view(t) : t);
  if (axis_is_none) axis = 0;
  const Tensor& first = xs[0];
  TS_CHECK(first.ndim() > 0, ValueError,
           "concat: zero-dimensional tensors cannot be concatenated; ",
           "hint: use stack, or axis=None");
  const int64_t ax = normalize_axis(axis, first.ndim(), "concat");
  Shape shape = first.shape();
  int64_t total = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    bool ok = t.ndim() == first.ndim();
    for (int64_t d = 0; ok && d < t.ndim(); ++d) ok = d == ax || t.dim(d) == first.dim(d);
    TS_CHECK(ok, ValueError, "concat: tensor ", i, " has shape ", shape_str(t.shape()),
             " but tensor 0 has shape ", shape_str(first.shape()),
             "; all dimensions except the concatenation axis ", ax, " must match");
    total = checked_add(total, t.dim(ax), "concat");
  }
  shape[ax] = total;
  Tensor out = empty_in_layout_of(xs, shape, common_dtype(xs));
  int64_t outer = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= shape[d];
  if (!join_bytes(out, xs, outer)) {
    int64_t at = 0;
    for (const Tensor& t : xs) {
      copy_(slice(out, ax, at, at + t.dim(ax), 1), t);
      at += t.dim(ax);
    }
  }
  if (autograd::needs_grad(xs)) autograd::record_concat(xs, out, ax);
  return out;
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  TS_CHECK(!xs.empty(), ValueError, "stack: need at least one tensor to stack");
  check_same_device(xs, "stack");
  for (size_t i = 1; i < xs.size(); ++i)
    TS_CHECK(xs[i].shape() == xs[0].shape(), ValueError, "stack: all tensors must have the same ",
             "shape, but tensor ", i, " has shape ", shape_str(xs[i].shape()), " and tensor 0 has ",
             shape_str(xs[0].shape()));
  const int64_t ax = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  Shape shape = xs[0].shape();
  shape.insert(ax, static_cast<int64_t>(xs.size()));
  Tensor out = Tensor::empty(shape, common_dtype(xs), xs[0].device());
  int64_t outer = 1;
  for (int64_t d = 0; d < ax; ++d) outer *= shape[d];
  if (!join_bytes(out, xs, outer))
    for (size_t i = 0; i < xs.size(); ++i) copy_(select(out, ax, i), xs[i]);
  if (autograd::needs_grad(xs)) autograd::record_stack(xs, out, ax);
  return out;
}

std::vector<Tensor> unstack(const Tensor& x, int64_t axis) {
  TS_CHECK(x.ndim() > 0, ValueError,
           "unstack: expected a tensor with at least 1 dimension, got a 0-d tensor");
  const int64_t ax = normalize_axis(axis, x.ndim(), "unstack");
  std::vector<Tensor> out;
  out.reserve(x.dim(ax));
  for (int64_t i = 0; i < x.dim(ax); ++i) out.push_back(select(x, ax, i));
  return out;
}

std::vector<Tensor> broadcast_arrays(const std::vector<Tensor>& xs) {
  Shape shape;
  for (const Tensor& t : xs) shape = broadcast_shapes(shape, t.shape(), "broadcast_arrays");
  std::vector<Tensor> out;
  out.reserve(xs.size());
  for (const Tensor& t : xs) out.push_back(broadcast_to(t, shape));
  return out;
}

Tensor roll(const Tensor& x, const Shape& shifts, const Shape& axes, bool flat) {
  if (flat) return reshape(roll(flatten_view(x), shifts, Shape{0}, false), x.shape());
  // shifts and axes broadcast against each other (NumPy): equal lengths, or one of length 1.
  const int64_t n = std::max(shifts.size(), axes.size());
  TS_CHECK((shifts.size() == n || shifts.size() == 1) && (axes.size() == n || axes.size() == 1),
           ValueError, "roll: shift ", shape_str(shifts), " and axis ", shape_str(axes),
           " must have the same length (or one of them a single int)");
  // Net shift per axis (repeated axes add up, like NumPy), kept modulo the axis size: the sum
  // of shifts near 2^63 on one axis overflowed int64 (and rolled by a wrapped amount).
  Shape net(x.ndim(), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = normalize_axis(axes[axes.size() == 1 ? 0 : i], x.ndim(), "roll");
    const __int128 size = x.dim(d);
    if (size) net[d] = static_cast<int64_t>((net[d] + shifts[shifts.size() == 1 ? 0 : i]
                                             % size) % size);
  }
  // Each output block [s:] / [:s] per axis is one strided copy: 2^k copies for k rolled axes.
  Tensor out = Tensor::empty(x.shape(), x.dtype(), x.device());
  std::vector<std::pair<Tensor, Tensor>> parts{{out, x}};
  for (int64_t d = 0; d < x.ndim(); ++d) {
    const int64_t n = x.dim(d);
    if (n == 0) break;
    const int64_t s = ((net[d] % n) + n) % n;
    if (s == 0) continue;
    std::vector<std::pair<Tensor, Tensor>> next;
    for (auto& [o, i] : parts) {
      next.emplace_back(slice(o, d, s, n, 1), slice(i, d, 0, n - s, 1));
      next.emplace_back(slice(o, d, 0, s, 1), slice(i, d, n - s, n, 1));
    }
    parts.swap(next);
  }
  for (auto& [o, i] : parts) copy_(o, i);
  if (autograd::needs_grad({&x})) autograd::record_roll(x, out, net);
  return out;
}

namespace {
// Shared tail of both repeat overloads: `counts` has one non-negative count per element of
// src along ax (already validated); one allocation, one kernel pass.
Tensor repeat_counts(const Tensor& src, int64_t ax, const int64_t* counts, int64_t total) {
  Shape shape = src.shape();
  shape[ax] = total;
  if (!repeat_stub.table[static_cast<int>(src.device().type)]) {
    // No repeat kernel on this backend: gather with the index "i, counts[i] times" built here.
    Tensor index = Tensor::empty(Shape{total}, DType::Int64, Device());
    int64_t* p = index.data<int64_t>();
    for (int64_t i = 0; i < src.dim(ax); ++i) p = std::fill_n(p, counts[i], i);
    return index_select(src, ax, to_device(index, src.device()));
  }
  Tensor out = Tensor::empty(shape, src.dtype(), src.device());
  if (out.numel() == 0) return out;
  repeat_stub.get(src.device())(out, contiguous(src), ax, counts);
  return out;
}

struct RepeatArgs {
  Tensor src;
  int64_t ax;
};

RepeatArgs repeat_args(const Tensor& x, int64_t axis, bool flat) {
  Tensor src = flat ? flatten_view(x) : x;
  TS_CHECK(src.ndim() > 0, ValueError, "repeat: a 0-d tensor needs axis=None");
  return {src, flat ? 0 : normalize_axis(axis, src.ndim(), "repeat")};
}
}  // namespace

Tensor repeat(const Tensor& x, int64_t repeats, int64_t axis, bool flat) {
  TS_CHECK(repeats >= 0, ValueError, "repeat: repeats must be non-negative, got ", repeats);
  auto [src, ax] = repeat_args(x, axis, flat);
  const std::vector<int64_t> counts(src.dim(ax), repeats);
  Tensor out = repeat_counts(src, ax, counts.data(), checked_mul(src.dim(ax), repeats, "repeat"));
  if (autograd::needs_grad({&src})) autograd::record_repeat(src, out, ax, repeats);
  return out;
}

Tensor repeat(const Tensor& x, const Tensor& repeats, int64_t axis, bool flat) {
  TS_CHECK(is_integral(repeats.dtype()), TypeError,
           "repeat: repeats must have an integer dtype, got ", dtype_name(repeats.dtype()));
  TS_CHECK(repeats.ndim() <= 1, ValueError,
           "repeat: repeats must be an int or a 1-D tensor, got shape ",
           shape_str(repeats.shape()));
  if (repeats.numel() == 1) return repeat(x, item(repeats).to<int64_t>(), axis, flat);
  auto [src, ax] = repeat_args(x, axis, flat);
  const int64_t n = src.dim(ax);
  TS_CHECK(repeats.dim(0) == n, ValueError, "repeat: repeats has ", repeats.dim(0),
           " elements but axis ", ax, " has size ", n);
  // The counts size the output, so they are read on the host (a device tensor is copied
  // there first, a synchronization, as PyTorch's repeat_interleave does).
  const Tensor host = repeats.device().is_cpu() ? repeats : to_device(repeats, Device());
  const Tensor reps = contiguous(astype(host, DType::Int64, false));
  const int64_t* r = reps.data<int64_t>();
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    TS_CHECK(r[i] >= 0, ValueError, "repeat: repeats must be non-negative, got ", r[i]);
    total = checked_add(total, r[i], "repeat");
  }
  Tensor out = repeat_counts(src, ax, r, total);
  if (autograd::needs_grad({&src})) {
    // Which source element each output position copies: i repeated r[i] times.
    Tensor index = Tensor::empty(Shape{total}, DType::Int64, Device());
    int64_t* p = index.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) p = std::fill_n(p, r[i], i);
    autograd::record_repeat_counts(src, out, ax, index);
  }
  return out;
}

Tensor tile(const Tensor& x, const Shape& reps_in) {
  for (int64_t r : reps_in)
    TS_CHECK(r >= 0, ValueError, "tile: repetitions must be non-negative, got ",
             shape_str(reps_in));
  const int64_t nd = std::max<int64_t>(x.ndim(), reps_in.size());
  Shape reps(nd - reps_in.size(), 1), xs(nd - x.ndim(), 1);
  for (int64_t r : reps_in) reps.push_back(r);
  for (int64_t s : x.shape()) xs.push_back(s);
  // View x as (1, s0, 1, s1, ...), broadcast to (r0, s0, r1, s1, ...), copy to (r0*s0, ...).
  Shape inter, wide, shape;
  for (int64_t d = 0; d < nd; ++d) {
    inter.push_back(1);
    inter.push_back(xs[d]);
    wide.push_back(reps[d]);
    wide.push_back(xs[d]);
    shape.push_back(checked_mul(reps[d], xs[d], "tile"));
  }
  return reshape(broadcast_to(reshape(x, inter), wide), shape, 1);
}

}  // namespace ts
