#include "ops/linalg.h"

#include "autograd/function.h"
#include "autograd/record.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/copy.h"
#include "ops/elementwise.h"
#include "ops/views.h"

namespace ts {

TS_DEFINE_STUB(MatmulKernel, matmul_stub, "matmul");

namespace {
Tensor matmul_impl(const Tensor& a0, const Tensor& b0) {
  check_same_device("matmul", a0, b0);
  TS_CHECK(a0.ndim() >= 1 && b0.ndim() >= 1, ValueError,
           "matmul: both operands need at least 1 dimension, got shapes ", shape_str(a0.shape()),
           " and ", shape_str(b0.shape()), "; hint: use multiply for scalars");
  const DType dt = promote_types(a0.dtype(), b0.dtype());
  TS_CHECK(!is_bool(dt), TypeError, "matmul: not supported for dtypes ", dtype_name(a0.dtype()),
           " and ", dtype_name(b0.dtype()), " (expected numeric inputs)");
  const bool a_vec = a0.ndim() == 1, b_vec = b0.ndim() == 1;
  Tensor a = a_vec ? expand_dims(a0, 0) : a0;
  Tensor b = b_vec ? expand_dims(b0, 1) : b0;
  const int64_t m = a.dim(a.ndim() - 2), k = a.dim(a.ndim() - 1);
  const int64_t k2 = b.dim(b.ndim() - 2), n = b.dim(b.ndim() - 1);
  if (k != k2)
    throw ValueError(str("matmul: shapes ", shape_str(a0.shape()), " and ", shape_str(b0.shape()),
                         " are not aligned: ", k, " (dim ", a0.ndim() - 1, ") != ", k2, " (dim ",
                         b_vec ? 0 : b0.ndim() - 2, ")"));
  Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  const Shape batch = broadcast_shapes(ba, bb, "matmul");
  Shape sa = batch, sb = batch, so = batch;
  sa.push_back(m);
  sa.push_back(k);
  sb.push_back(k);
  sb.push_back(n);
  so.push_back(m);
  so.push_back(n);
  a = broadcast_to(astype(a, dt, false), sa);
  b = broadcast_to(astype(b, dt, false), sb);
  Tensor out = Tensor::empty(so, dt, a0.device());
  if (out.numel() > 0) matmul_stub.get(out.device())(out, a, b);
  // Drop the dims that 1-D operands gained.
  if (a_vec && b_vec) return squeeze(out, Shape{-2, -1});
  if (a_vec) return squeeze(out, Shape{-2});
  if (b_vec) return squeeze(out, Shape{-1});
  return out;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {  // Note [Autocast inside the ops]
    Tensor x = a, y = b;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("matmul"), x, y);
    return matmul(x, y);
  }
  if (!autograd::needs_grad({&a, &b})) return matmul_impl(a, b);
  Tensor out;
  {
    autograd::GradModeGuard no_grad(false);
    out = matmul_impl(a, b);
  }
  out.impl()->is_view = false;
  autograd::record_matmul(a, b, out);
  return out;
}

Tensor tensordot(const Tensor& a, const Tensor& b, const Shape& axes_a, const Shape& axes_b) {
  if (autocast::active()) {
    Tensor x = a, y = b;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("tensordot"), x, y);
    return tensordot(x, y, axes_a, axes_b);
  }
  TS_CHECK(axes_a.size() == axes_b.size(), ValueError, "tensordot: axes ", shape_str(axes_a),
           " and ", shape_str(axes_b), " must have the same length");
  SmallVec<bool, 8> ca(a.ndim(), false), cb(b.ndim(), false);
  Shape pa, pb;
  int64_t ksize = 1;
  for (int64_t i = 0; i < axes_a.size(); ++i) {
    const int64_t x = normalize_axis(axes_a[i], a.ndim(), "tensordot");
    const int64_t y = normalize_axis(axes_b[i], b.ndim(), "tensordot");
    TS_CHECK(!ca[x] && !cb[y], ValueError, "tensordot: repeated axis");
    TS_CHECK(a.dim(x) == b.dim(y), ValueError, "tensordot: shape mismatch: axis ", axes_a[i],
             " of ", shape_str(a.shape()), " has size ", a.dim(x), " but axis ", axes_b[i], " of ",
             shape_str(b.shape()), " has size ", b.dim(y));
    ca[x] = cb[y] = true;
    ksize *= a.dim(x);
  }
  Shape free_a, free_b, out_shape, perm_a, perm_b;
  int64_t ma = 1, nb = 1;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!ca[d]) {
      perm_a.push_back(d);
      out_shape.push_back(a.dim(d));
      ma *= a.dim(d);
    }
  for (int64_t i = 0; i < axes_a.size(); ++i)
    perm_a.push_back(normalize_axis(axes_a[i], a.ndim(), "tensordot"));
  for (int64_t i = 0; i < axes_b.size(); ++i)
    perm_b.push_back(normalize_axis(axes_b[i], b.ndim(), "tensordot"));
  for (int64_t d = 0; d < b.ndim(); ++d)
    if (!cb[d]) {
      perm_b.push_back(d);
      out_shape.push_back(b.dim(d));
      nb *= b.dim(d);
    }
  Tensor a2 = reshape(permute_dims(a, perm_a), Shape{ma, ksize});
  Tensor b2 = reshape(permute_dims(b, perm_b), Shape{ksize, nb});
  return reshape(matmul(a2, b2), out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t naxes) {
  if (autocast::active()) {
    Tensor x = a, y = b;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("tensordot"), x, y);
    return tensordot(x, y, naxes);
  }
  TS_CHECK(naxes >= 0 && naxes <= a.ndim() && naxes <= b.ndim(), ValueError,
           "tensordot: axes=", naxes, " is invalid for shapes ", shape_str(a.shape()), " and ",
           shape_str(b.shape()));
  Shape xa, xb;
  for (int64_t i = 0; i < naxes; ++i) {
    xa.push_back(a.ndim() - naxes + i);
    xb.push_back(i);
  }
  return tensordot(a, b, xa, xb);
}

Tensor vecdot(const Tensor& a, const Tensor& b, int64_t axis) {
  if (autocast::active()) {
    Tensor x = a, y = b;
    const autocast::OpScope scope(TS_AUTOCAST_POLICY("vecdot"), x, y);
    return vecdot(x, y, axis);
  }
  TS_CHECK(a.ndim() >= 1 && b.ndim() >= 1, ValueError, "vecdot: inputs need at least 1 dimension");
  TS_CHECK(axis < 0, ValueError, "vecdot: axis must be negative (counted from the end), got ",
           axis);
  const int64_t ax_a = normalize_axis(axis, a.ndim(), "vecdot");
  const int64_t ax_b = normalize_axis(axis, b.ndim(), "vecdot");
  TS_CHECK(a.dim(ax_a) == b.dim(ax_b), ValueError, "vecdot: shapes ", shape_str(a.shape()), " and ",
           shape_str(b.shape()), " differ along axis ", axis, ": ", a.dim(ax_a),
           " != ", b.dim(ax_b));
  // sum(conj(a) * b, axis) as a batched (1, k) @ (k, 1) product.
  const Tensor am = moveaxis(a, Shape{ax_a}, Shape{-1}), bm = moveaxis(b, Shape{ax_b}, Shape{-1});
  Tensor ac = am;
  if (is_complex(am.dtype())) ac = conj(am);
  Tensor r = matmul(expand_dims(ac, -2), expand_dims(bm, -1));
  return squeeze(r, Shape{-2, -1});
}

}  // namespace ts
