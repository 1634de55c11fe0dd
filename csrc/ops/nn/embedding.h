// embedding and dropout (PyTorch's F.embedding / F.dropout) as C++ ops with their own autograd
// nodes (autograd/formulas_nn.cpp).
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts {
class Generator;
}

namespace ts::nn {

// Rows of weight (num, dim) at integer `indices` (any shape; negative ones wrap):
// indices.shape + (dim,). The weight's gradient adds the output gradient's rows into a zero
// gradient (index_add: work in proportion to the batch); the padding row gets none.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx);

// y = x * mask / (1 - p), mask ~ Bernoulli(1 - p) from `g` (the default generator when null),
// in training only (else x itself). inplace writes y into x and returns x (autograd's in-place
// rules when x needs a gradient: x takes y's history, a leaf that requires grad is refused).
Tensor dropout(const Tensor& x, double p, bool training, bool inplace, Generator* g);

}  // namespace ts::nn
