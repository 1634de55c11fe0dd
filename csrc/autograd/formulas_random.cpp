// Backward formulas of the samplers (csrc/ops/random_samplers.cpp): PyTorch's zero gradients.
#include "autograd/function.h"
#include "autograd/record.h"
#include "autograd/record_random.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/random_samplers.h"

namespace ts::autograd {

namespace {
// Zeros of each input's shape, dtype and device (the sampled value does not move with them).
variable_list zeros_bw(const BackwardCtx& c, const variable_list&) {
  variable_list out;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    if (!c.needs(i)) {
      out.emplace_back();
      continue;
    }
    const InputMeta& m = c.input(i);
    Tensor z = Tensor::empty(m.shape, m.dtype, m.device);
    fill_(z, Scalar::from_int(0));
    out.push_back(z);
  }
  return out;
}
variable_list standard_gamma_bw(const BackwardCtx& c, const variable_list& grads) {
  return {multiply(grads[0], standard_gamma_grad(c.saved(0), c.saved(1)))};
}
}  // namespace

void record_standard_gamma(const Tensor& alpha, const Tensor& out) {
  if (!needs_grad({&alpha})) return;
  static const Formula kFormula{"StandardGammaBackward", standard_gamma_bw};
  auto node = record(kFormula, {alpha}, {out});
  node->save(alpha);
  node->save(out, /*is_output=*/true);
}

void record_random(RandomGrad kind, const std::vector<Tensor>& inputs, const Tensor& out) {
  if (!needs_grad(inputs)) return;
  static const Formula kFormulas[] = {
      {"NormalBackward", zeros_bw},    {"BernoulliBackward", zeros_bw},
      {"PoissonBackward", zeros_bw},   {"UniformBackward", zeros_bw},
      {"RandomBackward", zeros_bw},    {"ExponentialBackward", zeros_bw},
      {"GeometricBackward", zeros_bw}, {"CauchyBackward", zeros_bw},
      {"LogNormalBackward", zeros_bw}};
  record(kFormulas[static_cast<int>(kind)], inputs, {out});
}

void record_random_fill(RandomGrad kind, const Tensor& x, const char* op) {
  check_inplace(x, op);
  check_no_internal_overlap(x, op);
  if (!needs_grad({&x})) return;
  // A stand-in result carrying the node; x takes its history (Note [Writes into views]).
  const Tensor r = Tensor::empty(x.shape(), x.dtype(), x.device());
  record_random(kind, {x}, r);
  rebase_history(x, r);
}

}  // namespace ts::autograd
