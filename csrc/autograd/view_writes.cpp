// Note [Writes into views]: PyTorch's CopySlices, in tessera's terms. A recorded view op tags
// its output with the root base it shares storage with (track_view). Writing into such a view
// v of base b (setitem, in-place arithmetic) is, mathematically, b_new = b_old with v's region
// replaced by the written value w. So the write gives b a new grad_fn, CopySlices, with two
// edges: b's old history gets G with v's region zeroed, and w's history gets G's region.
// (w's own graph reaches v's old value, and through v's view node b_old again, so the two
// paths sum there.) v and every other view of b then re-derive their grad_fn as "the region of
// b's new history" (ViewOfBase) the next time autograd reads it, found by a generation counter
// that every rebase of b bumps. Regions are addressed by b's row-major flat positions, which
// needs b's elements not to overlap (any strides, negative included) and b of the view's dtype.
// Views of tensors that do not require grad are tagged too (note_view, grad mode only, like
// PyTorch's views): writing a value that requires grad into one gives its base a history, so
// `buf = ts.zeros(3); buf[1:] += w` makes buf a non-leaf whose gradient reaches w.
#include "autograd/view_writes.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "autograd/grad_mode.h"
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/indexing_advanced.h"
#include "ops/views.h"

namespace ts::autograd {

namespace {

InputMeta meta_of(const Tensor& t) { return {t.shape(), t.dtype(), t.device()}; }

// Storage positions, relative to `lo`, of the elements of a tensor with this geometry, as a
// 1-D int64 tensor in row-major order.
Tensor geometry_positions(const Shape& shape, const Strides& strides, int64_t offset,
                          Device device) {
  Tensor pos = reshape(arange(Scalar::from_int(offset), Scalar::from_int(offset + 1),
                              Scalar::from_int(1), DType::Int64, device),
                       Shape{});
  const int64_t nd = static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < nd; ++d) {
    Shape s(nd, 1);
    s[d] = shape[d];
    const Tensor steps = arange(Scalar::from_int(0), Scalar::from_int(shape[d]),
                                Scalar::from_int(1), DType::Int64, device);
    pos = add(pos, reshape(multiply(steps, wrap_scalar(Scalar::from_int(strides[d]))), s));
  }
  return reshape(clone(broadcast_to(pos, shape)), Shape{numel_of(shape)});
}

// Flat (row-major) positions in a contiguous `base` of the elements of `view`.
Tensor contiguous_positions(const Tensor& base, const Tensor& view) {
  return geometry_positions(view.shape(), view.strides(), view.offset() - base.offset(),
                            base.device());
}

// The same for a strided `base` (transposed, negative steps, gaps): write each element's
// row-major number into a scratch buffer laid out like base's storage span, then read the
// buffer through the view's geometry.
Tensor strided_positions(const Tensor& base, const Tensor& view) {
  int64_t lo = base.offset(), hi = base.offset();
  for (int64_t d = 0; d < base.ndim(); ++d) {
    const int64_t ext = (base.dim(d) - 1) * base.strides()[d];
    (ext < 0 ? lo : hi) += ext;
  }
  Tensor buf = Tensor::empty(Shape{hi - lo + 1}, DType::Int64, base.device());
  const Tensor numbers = arange(Scalar::from_int(0), Scalar::from_int(base.numel()),
                                Scalar::from_int(1), DType::Int64, base.device());
  copy_(buf.as_strided(base.shape(), base.strides(), base.offset() - lo),
        reshape(numbers, base.shape()));
  return clone(buf.as_strided(view.shape(), view.strides(), view.offset() - lo));
}

// Row-major positions in `base` of the elements of `view`, as a 1-D int64 tensor.
Tensor view_positions(const Tensor& base, const Tensor& view) {
  GradModeGuard off(false);
  const Tensor pos = view.numel() == 0      ? Tensor::empty(Shape{0}, DType::Int64, base.device())
                     : base.is_contiguous() ? contiguous_positions(base, view)
                                            : strided_positions(base, view);
  return reshape(pos, Shape{view.numel()});
}

// No two elements of t share memory (a stride-0 broadcast result would, for example).
bool non_overlapping(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (|stride|, size) of the dims that step
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.dim(d) > 1) dims.emplace_back(std::abs(t.strides()[d]), t.dim(d));
  std::sort(dims.begin(), dims.end());
  int64_t reach = 0;  // how far the smaller dims already step, in elements
  for (const auto& [stride, size] : dims) {
    if (stride <= reach) return false;
    reach += stride * (size - 1);
  }
  return true;
}

Tensor flat(const Tensor& t) { return reshape(t, Shape{t.numel()}); }

// inputs: (base's old value, the written value); gradient: base's.
variable_list copy_slices_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor pos = c.saved(0), gf = flat(g[0]);
  Tensor g_base, g_value;
  if (c.needs(0))
    g_base = reshape(scatter(gf, 0, pos, scalar_tensor(Scalar::from_int(0), gf.dtype()), false),
                     c.input(0).shape);
  if (c.needs(1)) g_value = reshape(gather(gf, 0, pos), c.input(1).shape);
  return {g_base, g_value};
}
const Formula kCopySlices{"CopySlices", copy_slices_bw};

// input: the base; output: the view's region of it.
variable_list view_of_base_bw(const BackwardCtx& c, const variable_list& g) {
  const InputMeta& base = c.input(0);
  Tensor z = Tensor::empty(Shape{numel_of(base.shape)}, g[0].dtype(), g[0].device());
  fill_(z, Scalar::from_int(0));
  return {reshape(scatter(z, 0, c.saved(0), flat(g[0]), false), base.shape)};
}
const Formula kViewOfBase{"AsStridedBackward", view_of_base_bw};

bool addressable(const Tensor& base, const Tensor& view) {
  return base.dtype() == view.dtype() && (base.is_contiguous() || non_overlapping(base));
}

void check_addressable(const Tensor& base, const Tensor& view, const char* op) {
  if (!addressable(base, view))
    throw RuntimeError(str(op, ": in-place writes into a view are supported for views of ",
                           "tensors whose elements do not overlap, of the same dtype; this view (",
                           dtype_name(view.dtype()), ") is of a ", dtype_name(base.dtype()),
                           " tensor of shape ", shape_str(base.shape()), " and strides ",
                           shape_str(base.strides()), "; hint: clone() the base first"));
}

}  // namespace

namespace {
// The lowest and one past the highest storage element a geometry reaches (empty: none).
void widen_span(const Tensor& t, int64_t& lo, int64_t& hi) {
  if (t.numel() == 0) return;
  int64_t a = t.offset(), b = t.offset();
  for (int64_t d = 0; d < t.ndim(); ++d) {
    const int64_t ext = (t.dim(d) - 1) * t.strides()[d];
    (ext < 0 ? a : b) += ext;
  }
  lo = std::min(lo, a);
  hi = std::max(hi, b + 1);
}

// Note [as_strided's gradient]: as PyTorch's as_strided_backward, in storage coordinates.
// The output's gradient is summed into a buffer spanning the storage both geometries reach
// (an element read twice gets both); the input's gradient reads that buffer through the
// input's own geometry, so any input layout works (transposed, sliced, negative steps). An
// input whose elements share memory (an expand) splits each storage element's gradient evenly
// among the input elements on it. Storage the input does not cover gets no gradient.
// input: x; output: as_strided(x, ...); saved: the output's and the input's storage positions
// (relative to the span), and for an overlapping input the count of input elements sharing each
// input element's position; attrs: the span's length, whether the counts are saved.
variable_list as_strided_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor out_pos = c.saved(0), in_pos = c.saved(1);
  const int64_t span = c.attr(0);
  Tensor buf = Tensor::empty(Shape{span}, g[0].dtype(), g[0].device());
  fill_(buf, Scalar::from_int(0));
  buf = index_add(buf, 0, out_pos, flat(g[0]));
  Tensor gi = index_select(buf, 0, in_pos);
  if (c.attr(1)) gi = divide(gi, c.saved(2));
  return {reshape(gi, c.input(0).shape)};
}
const Formula kAsStrided{"AsStridedBackward0", as_strided_bw};
}  // namespace

void record_as_strided(const Tensor& x, const Tensor& out) {
  if (!needs_grad({&x})) return;
  GradModeGuard off(false);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  widen_span(x, lo, hi);
  widen_span(out, lo, hi);
  if (lo > hi) lo = hi = 0;  // both empty
  const Tensor out_pos =
      geometry_positions(out.shape(), out.strides(), out.offset() - lo, x.device());
  const Tensor in_pos = geometry_positions(x.shape(), x.strides(), x.offset() - lo, x.device());
  auto node = record(kAsStrided, {x}, {out});
  node->save(out_pos);
  node->save(in_pos);
  const bool overlapping = x.numel() > 1 && !x.is_contiguous() && !non_overlapping(x);
  node->attrs = {hi - lo, overlapping ? 1 : 0};
  if (overlapping) {
    Tensor count = Tensor::empty(Shape{hi - lo}, x.dtype(), x.device());
    fill_(count, Scalar::from_int(0));
    Tensor ones = Tensor::empty(Shape{x.numel()}, x.dtype(), x.device());
    fill_(ones, Scalar::from_int(1));
    count = index_add(count, 0, in_pos, ones);
    node->save(index_select(count, 0, in_pos));
  }
}

void track_view(const Tensor& view, const Tensor& source) {
  const AutogradMeta* sm = get_meta(source);
  const Tensor base = sm && sm->view_base.defined() ? sm->view_base : source;
  AutogradMeta& vm = ensure_meta(view);
  vm.view_base = base;
  const AutogradMeta* bm = get_meta(base);
  vm.base_gen = bm ? bm->history_gen : 0;
}

void note_view(const Tensor& source, const Tensor& view) {
  if (!grad_enabled() || !is_inexact(view.dtype()) || !view.impl()->is_view ||
      view.impl() == source.impl() || view.storage() != source.storage())
    return;
  const AutogradMeta* sm = get_meta(source);
  // A view whose own base autograd never learnt (made under no_grad, or by as_strided) can't
  // name the root: leave its views untagged so a write raises instead of losing the gradient.
  if (source.impl()->is_view && !(sm && sm->view_base.defined())) return;
  const Tensor& base = sm && sm->view_base.defined() ? sm->view_base : source;
  if (!addressable(base, view)) return;
  track_view(view, source);
}

void refresh_view_history(const Tensor& view, AutogradMeta& m) {
  const Tensor& base = m.view_base;
  const AutogradMeta* bm = get_meta(base);
  if (!bm || bm->history_gen == m.base_gen) return;
  check_addressable(base, view, "autograd");
  auto node = std::make_shared<FormulaNode>();
  node->formula = &kViewOfBase;
  node->next_edges.push_back(gradient_edge(base));
  node->inputs.push_back(meta_of(base));
  node->out_meta.push_back(meta_of(view));
  node->save(view_positions(base, view));
  m.grad_fn = node;
  m.output_nr = 0;
  m.requires_grad = false;
  m.base_gen = bm->history_gen;
}

void commit_write(const Tensor& x, const Edge& new_value) {
  AutogradMeta& m = ensure_meta(x);
  if (!m.view_base.defined()) {
    set_history(x, new_value.fn, new_value.input_nr);
    m.history_gen++;
    return;
  }
  const Tensor base = m.view_base;
  check_addressable(base, x, "in-place write");
  auto node = std::make_shared<FormulaNode>();
  node->formula = &kCopySlices;
  node->next_edges = {gradient_edge(base), new_value};
  node->inputs = {meta_of(base), meta_of(x)};
  node->out_meta.push_back(meta_of(base));
  node->save(view_positions(base, x));
  set_history(base, node, 0);
  ensure_meta(base).history_gen++;
  refresh_view_history(x, m);
}

void check_view_write(const Tensor& x, bool value_requires_grad, const char* op) {
  if (!grad_enabled() || !x.impl()->is_view) return;
  const AutogradMeta* m = get_meta(x);
  if (m && m->view_base.defined()) {
    const Tensor& base = m->view_base;
    if (is_leaf(base) && requires_grad(base))
      throw RuntimeError(str(op, ": a view of a leaf Variable that requires grad is being used in ",
                             "an in-place operation (a view of a leaf tensor that requires grad "
                             "cannot be written). Hint: wrap the write in `with ts.no_grad():` ",
                             "or write into a clone"));
    check_addressable(base, x, op);
    return;
  }
  // An untracked view nothing else aliases any more (made under no_grad from a temporary, say)
  // is written like any tensor: no other tensor can observe the write.
  if (value_requires_grad && x.storage().use_count() > 1)
    throw RuntimeError(str(op, ": in-place write of a value that requires grad into a view that ",
                           "autograd does not track (made under no_grad, by as_strided, or of ",
                           "such a view), so the write can't reach its base's gradient; hint: ",
                           "make the view with grad mode enabled, write into the base tensor ",
                           "itself, or clone() the view first"));
}

}  // namespace ts::autograd
