// PyTorch's scatter reductions and index writes that are not a plain copy: scatter_reduce
// (sum / prod / mean / amax / amin, include_self), with torch.gather's addressing.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scalar.h"
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

// torch.index_put: x with x[indices] = values (undefined entries of `indices` stand for full
// slices); accumulate=true adds instead, summing repeated indices. values has x's dtype.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate, const char* op = "index_put");
// torch.masked_scatter: x with the positions where the bool `mask` (broadcast to x) is true
// filled, in row-major order, by the first elements of `source` (x's dtype).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
// torch.put: x seen flattened with x.flatten()[index] = source (+= with accumulate).
Tensor put(const Tensor& x, const Tensor& index, const Tensor& source, bool accumulate);

// torch's *_scatter: a copy of x with one view of it (select(dim, index); the slice
// start:end:step along dim, nullopt for an omitted bound; the diagonal) replaced by src, whose
// shape must be the view's. Differentiable in x and src.
Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter(const Tensor& x, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step);
Tensor diagonal_scatter(const Tensor& x, const Tensor& src, int64_t offset, int64_t dim1,
                        int64_t dim2);
// take (array API / NumPy, and torch.take): x's elements at the integer `indices` along
// `axis`, or of the flattened x without one; shape x.shape[:axis] + indices.shape +
// x.shape[axis+1:]. Negative indices count from the end; IndexError naming take otherwise.
Tensor take(const Tensor& x, const Tensor& indices, std::optional<int64_t> axis);
// torch.nonzero_static: nonzero(x)'s (count, ndim) int64 coordinates cut or padded with rows
// of fill_value to `size` rows.
Tensor nonzero_static(const Tensor& x, int64_t size, int64_t fill_value);

// torch.as_strided_scatter: a copy of x (laid out as x.clone() lays it, preserve_format) whose
// as_strided(size, stride, offset) view (offset: nullopt for the copy's own, 0) holds src.
// Differentiable in x (contiguous, as PyTorch) and src.
Tensor as_strided_scatter(const Tensor& x, const Tensor& src, const Shape& size,
                          const Strides& stride, std::optional<int64_t> offset);
// torch.index_reduce: x with source's slices along `dim` reduced into x's slices index[i]
// ('prod', 'mean', 'amax', 'amin'; include_self as scatter_reduce). Differentiable in x and
// source (scatter_reduce's gradient). `op` names errors (index_reduce / index_reduce_).
Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self, const char* op);
// x.fill_diagonal_'s result out of place: x with its main diagonal (all dims equal for
// ndim > 2) set to `value`; wrap continues below a tall matrix every ncols + 1 rows.
Tensor fill_diagonal(const Tensor& x, const Scalar& value, bool wrap);
// torch.unravel_index: the coordinate tensors (int64) of flat `indices` into `shape`; indices
// outside [0, prod(shape)) wrap around (floor division and modulo), as torch's.
std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape);

}  // namespace ts
