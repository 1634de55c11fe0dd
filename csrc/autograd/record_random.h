// What the samplers (csrc/ops/random_samplers.cpp) call to record themselves; the formulas are
// in formulas_random.cpp. No-ops unless grad mode is on and an input requires grad.
#pragma once
#include <vector>

#include "core/tensor.h"

namespace ts::autograd {

// PyTorch's derivatives.yaml gives these samplers a zero gradient for every input (normal's
// mean and std, bernoulli's p, poisson's rate): NormalBackward, BernoulliBackward,
// PoissonBackward.
enum class RandomGrad { Normal, Bernoulli, Poisson };
void record_random(RandomGrad kind, const std::vector<Tensor>& inputs, const Tensor& out);

}  // namespace ts::autograd
