// embedding and dropout (PyTorch's F.embedding / F.dropout) as C++ ops with their own autograd
// nodes (autograd/formulas_nn.cpp).
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {
class Generator;
}

namespace ts::nn {

// out (n, dim) = weight's rows at `flat` (n int64, contiguous) on a device, each index checked
// against [0, num) without a synchronization (Note [Deferred device errors]). Kernel: CUDA.
using EmbeddingGatherKernel = void (*)(const Tensor& weight, const Tensor& flat, const Tensor& out);
TS_DECLARE_STUB(EmbeddingGatherKernel, embedding_gather_stub);

// Rows of weight (num, dim) at integer `indices` (any shape; each in [0, num) as PyTorch):
// indices.shape + (dim,). The weight's gradient adds the output gradient's rows into a zero
// gradient (index_add: work in proportion to the batch); the padding row gets none.
Tensor embedding(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx);

// Scales, in place and outside autograd, every row of `weight` named in `indices` whose
// norm_type-norm exceeds max_norm by max_norm / (norm + 1e-7) (PyTorch's embedding_renorm_).
// The indices are read on the host (a synchronization for a device tensor).
Tensor embedding_renorm_(const Tensor& weight, const Tensor& indices, double max_norm,
                         double norm_type);

// F.embedding: embedding() after embedding_renorm_ (max_norm), each row's gradient divided by
// its index's count in `indices` with scale_grad_by_freq (the counts read on the host).
// sparse=True is a NotImplementedError (no sparse gradients).
Tensor embedding_op(const Tensor& indices, const Tensor& weight, std::optional<int64_t> padding_idx,
                    std::optional<double> max_norm, double norm_type, bool scale_grad_by_freq,
                    bool sparse);

// The indices of a (host or device) integer tensor on the host, flattened, as int64.
std::vector<int64_t> host_indices(const Tensor& t);

// y = x * mask / (1 - p), mask ~ Bernoulli(1 - p) from `g` (the default generator when null),
// in training only (else x itself). inplace writes y into x and returns x (autograd's in-place
// rules when x needs a gradient: x takes y's history, a leaf that requires grad is refused).
Tensor dropout(const Tensor& x, double p, bool training, bool inplace, Generator* g);

}  // namespace ts::nn
