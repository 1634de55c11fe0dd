// bilinear: bilinear.h.
#include "ops/nn/bilinear.h"

#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/autocast_policy.h"
#include "ops/linalg.h"
#include "ops/nn/operand_dtype.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::nn {

Tensor bilinear(const Tensor& x1_, const Tensor& x2_, const Tensor& w_,
                const std::optional<Tensor>& bias_) {
  const char* op = "bilinear";
  Tensor x1 = x1_, x2 = x2_, w = w_, b = bias_ ? *bias_ : Tensor();
  TS_CHECK(w.ndim() == 3, ValueError, op, ": expected a 3-D weight (out, in1, in2), got shape ",
           shape_str(w.shape()));
  TS_CHECK(x1.ndim() >= 1 && x1.dim(x1.ndim() - 1) == w.dim(1), ValueError, op,
           ": input1 size does not match weight size: got ", x1.ndim() ? x1.dim(x1.ndim() - 1) : 0,
           " but expected ", w.dim(1), " (input1 ", shape_str(x1.shape()), ", weight ",
           shape_str(w.shape()), ")");
  TS_CHECK(x2.ndim() >= 1 && x2.dim(x2.ndim() - 1) == w.dim(2), ValueError, op,
           ": input2 size does not match weight size: got ", x2.ndim() ? x2.dim(x2.ndim() - 1) : 0,
           " but expected ", w.dim(2), " (input2 ", shape_str(x2.shape()), ", weight ",
           shape_str(w.shape()), ")");
  // PyTorch's CPU autocast leaves bilinear alone, so only device operands take the op's scope
  std::optional<autocast::OpScope> scope;
  if (!x1.device().is_cpu()) {
    if (bias_)
      scope.emplace(TS_AUTOCAST_POLICY("bilinear"), x1, x2, w, b);
    else
      scope.emplace(TS_AUTOCAST_POLICY("bilinear"), x1, x2, w);
  }
  check_same_dtype(op, "input1", x1, {{"input2", &x2}, {"weight", &w}, {"bias", &b}});
  // (..., 1, 1, in1) @ (out, in1, in2) -> (..., out, 1, in2) -> (..., out, in2)
  const Tensor rows = matmul(expand_dims(expand_dims(x1, -2), -2), w);
  const Tensor first = select(rows, rows.ndim() - 2, 0);
  const Tensor prod = multiply(first, expand_dims(x2, -2));
  Tensor y = sum(prod, Shape{prod.ndim() - 1}, false, std::nullopt);
  return bias_ ? add(y, b) : y;
}

}  // namespace ts::nn
