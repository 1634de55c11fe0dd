// PyTorch's scatter reductions and index writes that are not a plain copy: scatter_reduce
// (sum / prod / mean / amax / amin, include_self), with torch.gather's addressing.
#pragma once
#include <string>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

enum class ScatterReduceOp : int { Sum = 0, Prod = 1, Mean = 2, Amax = 3, Amin = 4 };

// The reduce name as torch spells it ('sum', 'prod', 'mean', 'amax', 'amin'); ValueError
// naming `op` otherwise.
ScatterReduceOp scatter_reduce_op(const std::string& name, const char* op);

// out[off[p]] = reduce(out[off[p]], src[p]) for p in [0, n), in position order, for a
// contiguous `out` and a contiguous `src` of out's dtype. Without include_self, the first
// value reaching an element replaces it. Mean divides by the count of values (plus one with
// include_self) at the end, with floor division for integers.
using ScatterReduceKernel = void (*)(const Tensor& out, const int64_t* off, const Tensor& src,
                                     ScatterReduceOp reduce, bool include_self);
TS_DECLARE_STUB(ScatterReduceKernel, scatter_reduce_stub);

// torch.scatter_reduce: x with src's values (the part of src index covers) reduced into the
// elements index addresses along `dim` (out[index[i][j]][j] op= src[i][j] for dim=0).
// Differentiable in x and src for floating dtypes (torch's scatter_reduce_backward).
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                      ScatterReduceOp reduce, bool include_self);

}  // namespace ts
