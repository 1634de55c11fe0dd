// gumbel_softmax (PyTorch's F.gumbel_softmax), written with recorded ops.
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// softmax((logits + g) / tau) along dim with g ~ Gumbel(0, 1) (drawn on the host from the
// default generator, as ts.random.uniform, then moved to the logits' device); with hard the
// value is the one-hot argmax and the gradient the soft sample's (straight-through). eps is
// unused (PyTorch's deprecated argument).
Tensor gumbel_softmax(const Tensor& logits, double tau, bool hard, double eps, int64_t dim);

}  // namespace ts::nn
