// Recording of the scatter reductions (ops/indexing_scatter.h).
#pragma once
#include "core/tensor.h"

namespace ts::autograd {

// out = scatter_reduce(x, dim, index, src, reduce, include_self) (reduce: ScatterReduceOp).
void record_scatter_reduce(const Tensor& x, const Tensor& src, const Tensor& out, int64_t dim,
                           const Tensor& index, int reduce, bool include_self);

}  // namespace ts::autograd
