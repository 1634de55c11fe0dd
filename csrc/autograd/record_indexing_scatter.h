// Recording of the scatter reductions (ops/indexing_scatter.h).
#pragma once
#include "core/tensor.h"

namespace ts::autograd {

// out = scatter_reduce(x, dim, index, src, reduce, include_self) (reduce: ScatterReduceOp).
void record_scatter_reduce(const Tensor& x, const Tensor& src, const Tensor& out, int64_t dim,
                           const Tensor& index, int reduce, bool include_self);
// out = as_strided_scatter(x, src, size, stride, offset) for a contiguous x.
void record_as_strided_scatter(const Tensor& x, const Tensor& src, const Tensor& out,
                               const Shape& size, const Strides& stride, int64_t offset);

}  // namespace ts::autograd
