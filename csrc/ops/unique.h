// The set functions (issue 17: one definition each, built from sort, compare, cumsum and
// index ops, so they run where those run, CUDA included, without a host copy): torch.unique /
// unique_consecutive (flattened or slices along a dim), the array API's unique_all family, and
// isin. torch.cross (dim=None: the first dim of size 3) is here too, over linalg's cross.
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts {

// The parts of a unique result; a field is empty (undefined) when it was not asked for.
struct UniqueParts {
  Tensor values;   // the distinct values (1-D), or x with the distinct slices along dim
  Tensor indices;  // int64: the flat index of each value's first occurrence (array API only)
  Tensor inverse;  // int64: x's shape (flattened unique) or (x.shape[dim],)
  Tensor counts;   // int64: how often each value (slice) occurs
};

// Note [Unique order]: values ascend as sort orders them (NaNs last; complex values in NumPy's
// order: lexicographic by (real, imag), then R+NaNj, NaN+Rj, NaN+NaNj). Values compare with
// !=, so every NaN is its own value (count 1) and -0.0 merges with 0.0, as torch.unique on the
// CPU and the array API standard. With `dim`, slices are ordered lexicographically and merge
// when all their elements compare equal. `consecutive` merges only runs of equal neighbours,
// unsorted (torch.unique_consecutive). Not differentiable: the results record no graph.
UniqueParts unique(const Tensor& x, std::optional<int64_t> dim, bool consecutive, bool want_indices,
                   bool want_inverse, bool want_counts);

// torch.isin / numpy.isin: bool of elements' shape, true where the element equals some element
// of test_elements (both compared in their promoted dtype; NaN is never found), negated by
// `invert`. Sort and binary search, O((n + m) log m); complex compares against every element.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert);

// torch.cross: linalg's cross along dim, or, when dim is nullopt, along the first dim of
// input of size 3 (RuntimeError when there is none).
Tensor cross_torch(const Tensor& input, const Tensor& other, std::optional<int64_t> dim);

}  // namespace ts
