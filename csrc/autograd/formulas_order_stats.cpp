// Backward formulas of the order-statistics reductions (ops/order_stats.cpp). The reductions
// that return indices gather their values (take_along_axis), so only the median of all
// elements needs a formula of its own.
#include "autograd/function.h"
#include "autograd/record_order_stats.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/elementwise_defs.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/where.h"

namespace ts::autograd {

namespace {

// Note [Evenly distributed backward]: g / count at every element equal to the value (NaN
// values match the NaNs), as PyTorch's evenly_distribute_backward; written with ops, so it is
// differentiable again.
variable_list evenly_distributed_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor x = c.saved(0), value = c.saved(1);
  const Tensor hit =
      where(unary_op(isnan_def, value), unary_op(isnan_def, x), binary_op(equal_def, x, value));
  const Tensor mask = astype(hit, g[0].dtype(), false);
  const Tensor count = sum(mask, std::nullopt, false, std::nullopt);
  return {multiply(mask, divide(g[0], count))};
}

const Formula kEvenly{"MedianBackward", evenly_distributed_bw};

}  // namespace

void record_evenly_distributed(const Tensor& x, const Tensor& out) {
  if (!needs_grad({&x}) || !is_inexact(out.dtype())) return;
  auto node = record(kEvenly, {x}, {out});
  node->save(x);
  node->save(out, /*is_output=*/true);
}

}  // namespace ts::autograd
