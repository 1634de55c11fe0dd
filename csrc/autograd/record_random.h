// What the samplers (csrc/ops/random_samplers.cpp) call to record themselves; the formulas are
// in formulas_random.cpp. No-ops unless grad mode is on and an input requires grad.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace ts::autograd {

// PyTorch's derivatives.yaml gives these samplers a zero gradient for every input (normal's
// mean and std, bernoulli's p, poisson's rate, the tensor an in-place fill overwrites):
// NormalBackward, BernoulliBackward, ...
enum class RandomGrad {
  Normal,
  Bernoulli,
  Poisson,
  Uniform,
  Random,
  Exponential,
  Geometric,
  Cauchy,
  LogNormal
};
void record_random(RandomGrad kind, const std::vector<Tensor>& inputs, const Tensor& out);
// An in-place fill of x (before it writes): when x is part of a graph (a non-leaf that
// requires grad), x takes a node of `kind` whose gradient for x's old value is zero, as
// PyTorch's x.normal_() & co.; leaves that require grad raise (check_inplace).
// _standard_gamma's reparameterized gradient: grad * standard_gamma_grad(alpha, out).
void record_standard_gamma(const Tensor& alpha, const Tensor& out);
void record_random_fill(RandomGrad kind, const Tensor& x, const char* op);

}  // namespace ts::autograd
