// Backward formula of scatter_reduce (ops/indexing_scatter.cpp): PyTorch's
// scatter_reduce_backward (derivatives.yaml), written with ops so it is differentiable again.
#include "autograd/function.h"
#include "autograd/record_indexing_scatter.h"
#include "autograd/view_writes.h"
#include "ops/arithmetic.h"
#include "ops/bitwise.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/indexing_advanced.h"
#include "ops/indexing_scatter.h"
#include "ops/views.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

Tensor filled(const Shape& shape, int64_t v, DType dt, Device dev) {
  Tensor t = Tensor::empty(shape, dt, dev);
  fill_(t, Scalar::from_int(v));
  return t;
}
Tensor one() { return wrap_scalar(Scalar::from_int(1)); }
Tensor equal(const Tensor& a, const Tensor& b) { return binary_op(equal_def, a, b); }

// The leading block of src that index addresses (a view), and a gradient for it padded with
// zeros back to src's shape.
Tensor block_of(const Tensor& src, const Tensor& index) {
  Tensor s = src.ndim() != index.ndim() ? reshape(src, index.shape()) : src;
  for (int64_t d = 0; d < index.ndim(); ++d) s = slice(s, d, 0, index.dim(d), 1);
  return s;
}
Tensor pad_to(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  if (numel_of(g.shape()) == numel_of(shape)) return reshape(g, shape);
  Tensor out = filled(shape, 0, g.dtype(), g.device());
  copy_(block_of(out, g), g);
  return out;
}

// Note [scatter_reduce backward]: as PyTorch's scatter_reduce_backward. amax/amin share the
// gradient evenly among self and src values equal to the result (self compared even where
// include_self=False left it out, as PyTorch does, then zeroed); prod recomputes the products
// with zeros masked to one so that a single zero factor gets the product of the others.
variable_list scatter_reduce_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor x = c.saved(0), src = c.saved(1), out = c.saved(2), index = c.saved(3);
  const int64_t dim = c.attr(0);
  const auto r = static_cast<ScatterReduceOp>(c.attr(1));
  const bool inc = c.attr(2) != 0;
  const Tensor& gg = g[0];
  const Tensor sb = block_of(src, index);
  Tensor gx, gs;
  switch (r) {
    case ScatterReduceOp::Sum:
      gx = gg;
      gs = gather(gg, dim, index);
      break;
    case ScatterReduceOp::Mean: {
      Tensor n = scatter(filled(gg.shape(), inc ? 1 : 0, gg.dtype(), gg.device()), dim, index,
                         filled(index.shape(), 1, gg.dtype(), gg.device()), true);
      n = where(equal(n, wrap_scalar(Scalar::from_int(0))), one(), n);
      gx = divide(gg, n);
      gs = divide(gather(gg, dim, index), gather(n, dim, index));
      break;
    }
    case ScatterReduceOp::Prod: {
      const Tensor zero = wrap_scalar(Scalar::from_int(0));
      const Tensor masked_self = where(equal(x, zero), one(), x);
      const Tensor masked_self_result =
          scatter_reduce(masked_self, dim, index, src, ScatterReduceOp::Prod, inc);
      gx = divide(multiply(gg, masked_self_result), masked_self);
      const Tensor src_zero = equal(sb, zero);
      const Tensor num_zeros = gather(scatter(filled(gg.shape(), 0, gg.dtype(), gg.device()), dim,
                                              index, astype(src_zero, gg.dtype(), false), true),
                                      dim, index);
      const Tensor single_zero = binary_op(logical_and_def, src_zero, equal(num_zeros, one()));
      const Tensor masked_src = where(single_zero, one(), sb);
      const Tensor masked_src_result =
          scatter_reduce(x, dim, index, masked_src, ScatterReduceOp::Prod, inc);
      gs = where(single_zero, gather(multiply(gg, masked_src_result), dim, index),
                 divide(gather(multiply(gg, out), dim, index), where(src_zero, one(), sb)));
      break;
    }
    case ScatterReduceOp::Amax:
    case ScatterReduceOp::Amin: {
      const Tensor value = gather(out, dim, index);
      const Tensor self_is = astype(equal(x, out), gg.dtype(), false);
      const Tensor src_is = astype(equal(sb, value), gg.dtype(), false);
      const Tensor share = divide(gg, scatter(self_is, dim, index, src_is, true));
      gx = multiply(self_is, share);
      gs = multiply(src_is, gather(share, dim, index));
      break;
    }
  }
  if (!inc && c.needs(0))
    gx = scatter(gx, dim, index, scalar_tensor(Scalar::from_int(0), gx.dtype()), false);
  return {c.needs(0) ? gx : Tensor(), c.needs(1) ? pad_to(gs, src.shape()) : Tensor()};
}

// Note [as_strided_scatter backward]: PyTorch's as_strided_scatter_backward for a contiguous
// x: the gradient of x is grad with the scattered region zeroed, src's the region of grad
// (both written with ops, so differentiable again).
variable_list as_strided_scatter_bw(const BackwardCtx& c, const variable_list& g) {
  const Shape& a = c.attrs();
  const auto nd = static_cast<size_t>(a[0]);
  Shape size;
  Strides stride;
  for (size_t i = 0; i < nd; ++i) {
    size.push_back(a[1 + i]);
    stride.push_back(a[1 + nd + i]);
  }
  const int64_t off = a[1 + 2 * nd];
  const Tensor gg = contiguous_op(g[0]);
  Tensor gx, gs;
  if (c.needs(1)) {
    const Tensor v = gg.as_strided(size, stride, off);
    record_as_strided(gg, v);
    gs = clone_op(v);
  }
  if (c.needs(0))
    gx = as_strided_scatter(gg, filled(size, 0, gg.dtype(), gg.device()), size, stride, off);
  return {gx, gs};
}

}  // namespace

void record_as_strided_scatter(const Tensor& x, const Tensor& src, const Tensor& out,
                               const Shape& size, const Strides& stride, int64_t offset) {
  if (!is_inexact(out.dtype())) return;
  static const Formula kF{"AsStridedScatterBackward", as_strided_scatter_bw};
  auto node = record(kF, {x, src}, {out});
  Shape attrs{static_cast<int64_t>(size.size())};
  for (int64_t v : size) attrs.push_back(v);
  for (int64_t v : stride) attrs.push_back(v);
  attrs.push_back(offset);
  node->attrs = attrs;
}

void record_scatter_reduce(const Tensor& x, const Tensor& src, const Tensor& out, int64_t dim,
                           const Tensor& index, int reduce, bool include_self) {
  if (!needs_grad({&x, &src}) || !is_inexact(out.dtype())) return;
  static const Formula kF{"ScatterReduceBackward", scatter_reduce_bw};
  auto node = record(kF, {x, src}, {out});
  node->attrs = Shape{dim, reduce, include_self ? 1 : 0};
  node->save(x);
  node->save(src);
  node->save(out, /*is_output=*/true);
  node->save(index);
}

}  // namespace ts::autograd
