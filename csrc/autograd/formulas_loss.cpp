// Backward formulas of the losses (csrc/ops/nn/loss*.cpp) that are not compositions of
// recorded ops: binary cross entropy, whose clamped logs would give a zero gradient at
// p in {0, 1} where PyTorch's formula stays finite (written with ops, so gradients of every
// order work); the CTC loss, whose gradient is its backward kernel's (PyTorch's beta
// recursion) and, as in PyTorch, has no derivative of its own.
#include "autograd/function.h"
#include "autograd/record.h"
#include "autograd/record_nn.h"
#include "ops/arithmetic.h"
#include "ops/compare.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/nn/loss_ctc.h"

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

// ---- CTC: attrs (blank, zero_infinity); saved log_probs, targets, input/target lengths, nll
// (the output), log_alpha. Under create_graph the gradient gets a node that raises when it is
// differentiated (PyTorch: "derivative for aten::_ctc_loss_backward is not implemented").
variable_list ctc_loss_bw(const BackwardCtx& c, const variable_list& g) {
  const Tensor lp = c.saved(0);
  const Tensor grad = nn::ctc_loss_backward(g[0], lp, c.saved(1), c.saved(2), c.saved(3),
                                            c.saved(4), c.saved(5), c.attr(0), c.attr(1) != 0);
  if (grad_enabled()) record_missing("CtcLossBackwardBackward", {g[0], lp}, {grad});
  return {grad};
}

}  // namespace

void record_ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                     const Tensor& target_lengths, const Tensor& nll, const Tensor& log_alpha,
                     int64_t blank, bool zero_infinity) {
  if (!needs_grad({&log_probs})) return;
  static const Formula kCtcLoss{"CtcLossBackward", ctc_loss_bw};
  auto node = record(kCtcLoss, {log_probs}, {nll});
  if (anomaly_enabled()) node->creation_site = "(see the Python traceback of the forward call)";
  node->attrs = Shape{blank, zero_infinity ? 1 : 0};
  node->save(log_probs);
  node->save(targets);
  node->save(input_lengths);
  node->save(target_lengths);
  node->save(nll, true);
  node->save(log_alpha);
}

void record_binary_cross_entropy(const Tensor& p, const Tensor& y, const Tensor& loss) {
  if (!needs_grad({&p, &y})) return;
  static const Formula kBinaryCrossEntropy{"BinaryCrossEntropyBackward", binary_cross_entropy_bw};
  auto node = record(kBinaryCrossEntropy, {p, y}, {loss});
  if (anomaly_enabled()) node->creation_site = "(see the Python traceback of the forward call)";
  node->save(p);
  node->save(y);
}

}  // namespace ts::autograd
