// sort / argsort / topk along one axis, and searchsorted.
#pragma once
#include <utility>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// Note [Sort order]: real values sort ascending with NaNs last (NumPy); descending is the
// exact reverse of that order for distinct values (so NaNs come first, as in PyTorch and
// array-api-strict) while equal values keep their original order (stable both ways).
// x, values and indices share one shape and are sorted along their last axis; either output
// may be null. Outputs may be strided views.
using SortKernel = void (*)(const Tensor& x, const Tensor* values, const Tensor* indices,
                            bool descending);
// out[i] = insertion point of v[i] into the ascending 1-D `sorted` (same dtype, contiguous;
// v contiguous): the first (right=false) or last (right=true) position keeping the order.
using SearchSortedKernel = void (*)(const Tensor& sorted, const Tensor& v, const Tensor& out,
                                    bool right);
// The first k of each row's sort order (descending when `largest`), ties by index; values
// and indices have k along their last axis.
using TopkKernel = void (*)(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t k,
                            bool largest);
TS_DECLARE_STUB(SortKernel, sort_stub);
TS_DECLARE_STUB(TopkKernel, topk_stub);
TS_DECLARE_STUB(SearchSortedKernel, searchsorted_stub);

Tensor sort(const Tensor& x, int64_t axis, bool descending);
Tensor argsort(const Tensor& x, int64_t axis, bool descending);
// (values, int64 indices) in one pass.
std::pair<Tensor, Tensor> sort_with_indices(const Tensor& x, int64_t axis, bool descending);
// torch.topk: the k largest (or smallest) along dim, in sorted order; ties keep index order.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest);
// numpy.searchsorted on a 1-D x1 (optionally through `sorter`, indices that sort x1).
Tensor searchsorted(const Tensor& x1, const Tensor& x2, bool right, const Tensor* sorter);

}  // namespace ts
