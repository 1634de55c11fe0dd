// gumbel_softmax: gumbel_softmax.h.
#include "ops/nn/gumbel_softmax.h"

#include "autograd/meta.h"
#include "core/error.h"
#include "core/shape.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/creation.h"
#include "ops/math.h"
#include "ops/nn/softmax.h"
#include "ops/random.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::nn {

Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, double /*eps*/, int64_t dim) {
  const char* op = "gumbel_softmax";
  TS_CHECK(is_floating(logits.dtype()), TypeError, op, ": expected floating logits, got ",
           dtype_name(logits.dtype()));
  Tensor u = Tensor::empty(logits.shape(), logits.dtype());
  uniform_(u, 0.0, 1.0, default_generator());
  if (!logits.device().is_cpu()) u = to_device(u, logits.device());
  // -log(Exponential(1)) with the exponential drawn as -log(1 - u), u in [0, 1)
  const Tensor gumbels = negative(unary_op(log_def, negative(unary_op(log1p_def, negative(u)))));
  const Tensor y_soft = softmax(divide(add(logits, gumbels), wrap_scalar(Scalar::from_double(tau))),
                                dim, std::nullopt);
  if (!hard) return y_soft;
  const int64_t axis = logits.ndim() ? normalize_axis(dim, logits.ndim(), op) : 0;
  const Tensor soft = autograd::detach(y_soft);
  const Tensor idx = argmax(soft, axis, true);
  Shape column{-1};
  for (int64_t i = axis + 1; i < logits.ndim(); ++i) column.push_back(1);
  const Tensor positions =
      reshape(arange(Scalar::from_int(0), Scalar::from_int(logits.ndim() ? logits.dim(axis) : 1),
                     Scalar::from_int(1), DType::Int64, logits.device()),
              column);
  const Tensor y_hard = astype(binary_op(equal_def, positions, idx), logits.dtype(), false);
  return add(subtract(y_hard, soft), y_soft);
}

}  // namespace ts::nn
