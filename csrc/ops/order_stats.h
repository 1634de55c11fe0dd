// PyTorch's reductions that pick one element per slice along a dim and return it with its
// index: max/min(x, dim), kthvalue, median/nanmedian(x, dim). The values are gathered from x
// at the picked indices (take_along_axis), so their gradient flows to the picked elements.
// A 0-d x is read as shape (1,) along dim 0 or -1 (as PyTorch); an empty dim raises IndexError.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace ts {

// (values, int64 indices): the first maximum / minimum along dim (NaN counts as the extreme).
std::pair<Tensor, Tensor> max_with_indices(const Tensor& x, int64_t dim, bool keepdim);
std::pair<Tensor, Tensor> min_with_indices(const Tensor& x, int64_t dim, bool keepdim);
// The k-th smallest (k counts from 1) along dim; ties keep index order (stable sort).
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim);
// The lower median along dim. ignore_nan=false (median): any NaN makes the slice's median NaN
// (the index of its first NaN); true (nanmedian): the lower median of the non-NaN values (NaN
// only where all are NaN).
std::pair<Tensor, Tensor> median_with_indices(const Tensor& x, int64_t dim, bool keepdim,
                                              bool ignore_nan);
// The lower median of all elements (0-d), with PyTorch's gradient: shared evenly by every
// element equal to it (by the NaNs when it is NaN). An empty x gives NaN (integers: the value
// PyTorch's CPU gets converting NaN).
Tensor median_all(const Tensor& x, bool ignore_nan);

}  // namespace ts
