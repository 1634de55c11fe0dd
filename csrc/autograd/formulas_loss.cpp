// Backward formulas of the losses (csrc/ops/nn/loss*.cpp) that are not compositions of
// recorded ops: binary cross entropy, whose clamped logs would give a zero gradient at
// p in {0, 1} where PyTorch's formula stays finite. Written with ops, so gradients of every
// order work.
#include "autograd/function.h"
#include "autograd/record_nn.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"

namespace ts::autograd {

namespace {

Tensor sc(double v) { return wrap_scalar(Scalar::from_double(v)); }

// ---- binary cross entropy: saved p, y. The clamp is PyTorch's EPSILON, the float 1e-12.
variable_list binary_cross_entropy_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor p = c.saved(0), y = c.saved(1);
  Tensor gp, gy;
  if (c.needs(0)) {
    const Tensor denom =
        binary_op(maximum_def, multiply(subtract(sc(1.0), p), p), sc(static_cast<double>(1e-12f)));
    gp = divide(multiply(g[0], subtract(p, y)), denom);
  }
  if (c.needs(1))
    gy = multiply(g[0], subtract(unary_op(log1p_def, negative(p)), unary_op(log_def, p)));
  return {gp, gy};
}

}  // namespace

void record_binary_cross_entropy(const Tensor& p, const Tensor& y, const Tensor& loss) {
  if (!needs_grad({&p, &y})) return;
  static const Formula kBinaryCrossEntropy{"BinaryCrossEntropyBackward", binary_cross_entropy_bw};
  auto node = record(kBinaryCrossEntropy, {p, y}, {loss});
  if (anomaly_enabled()) node->creation_site = "(see the Python traceback of the forward call)";
  node->save(p);
  node->save(y);
}

}  // namespace ts::autograd
