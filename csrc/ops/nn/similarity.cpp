// cosine_similarity and scale_grad: similarity.h.
#include "ops/nn/similarity.h"

#include "autograd/function.h"
#include "autograd/meta.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/linalg_composite.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::nn {

namespace {

// max(n, eps) in value, n in gradient: n + detach(max(n, eps) - n).
Tensor clamp_min_identity_grad(const Tensor& n, double eps) {
  const Tensor shift = autograd::detach(
      subtract(binary_op(maximum_def, n, wrap_scalar(Scalar::from_double(eps))), n));
  return add(n, shift);
}

// d(scale_grad(x, s))/dx = s: the gradient times the saved scale (recorded, so differentiable).
autograd::variable_list scale_grad_bw(const autograd::BackwardCtx& c,
                                      const autograd::variable_list& g) {
  return {multiply(g[0], c.saved(0))};
}

}  // namespace

Tensor cosine_similarity(const Tensor& x1_, const Tensor& x2_, int64_t dim, double eps) {
  const char* op = "cosine_similarity";
  Tensor x1 = x1_, x2 = x2_;
  const autocast::OpScope scope(TS_AUTOCAST_POLICY("cosine_similarity"), x1, x2);
  const DType common = result_type(x1, x2);
  TS_CHECK(is_floating(common), TypeError, op,
           ": expected common dtype to be floating point, yet common dtype is ", dtype_name(common),
           " (x1 ", dtype_name(x1.dtype()), ", x2 ", dtype_name(x2.dtype()),
           "); pass floating tensors");
  if (!is_floating(x1.dtype())) x1 = astype(x1, common, false);
  if (!is_floating(x2.dtype())) x2 = astype(x2, common, false);
  if (x1.shape() != x2.shape()) {
    const Shape shape = broadcast_shapes(x1.shape(), x2.shape(), op);
    x1 = broadcast_to(x1, shape);
    x2 = broadcast_to(x2, shape);
  }
  const int64_t axis = normalize_axis(dim, x1.ndim(), op);
  const Scalar two = Scalar::from_double(2.0);
  const Tensor n1 = clamp_min_identity_grad(vector_norm(x1, Shape{axis}, true, two), eps);
  const Tensor n2 = clamp_min_identity_grad(vector_norm(x2, Shape{axis}, true, two), eps);
  return sum(multiply(divide(x1, n1), divide(x2, n2)), Shape{axis}, false, std::nullopt);
}

Tensor scale_grad(const Tensor& x, const Tensor& scale) {
  Tensor y = clone(x);
  if (!autograd::needs_grad({&x})) return y;
  static const autograd::Formula kScaleGrad{"ScaleGradBackward", scale_grad_bw};
  auto node = autograd::record(kScaleGrad, {x}, {y});
  node->save(autograd::detach(scale));
  return y;
}

}  // namespace ts::nn
