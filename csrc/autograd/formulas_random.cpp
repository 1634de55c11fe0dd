// Backward formulas of the samplers (csrc/ops/random_samplers.cpp): PyTorch's zero gradients.
#include "autograd/function.h"
#include "autograd/record_random.h"
#include "ops/copy.h"

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
}  // namespace

void record_random(RandomGrad kind, const std::vector<Tensor>& inputs, const Tensor& out) {
  if (!needs_grad(inputs)) return;
  static const Formula kNormal{"NormalBackward", zeros_bw};
  static const Formula kBernoulli{"BernoulliBackward", zeros_bw};
  static const Formula kPoisson{"PoissonBackward", zeros_bw};
  record(kind == RandomGrad::Normal      ? kNormal
         : kind == RandomGrad::Bernoulli ? kBernoulli
                                         : kPoisson,
         inputs, {out});
}

}  // namespace ts::autograd
