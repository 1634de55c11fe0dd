// PyTorch's statistics written with ops (so their gradients come from the ops they are made
// of, and they run on every device): logsumexp, cummax / cummin, mode, quantile / nanquantile.
// The values that come with indices are gathered from x at those indices (take_along_axis), so
// their gradient flows to the picked elements. A 0-d x is read as shape (1,) along dim 0 or -1.
#pragma once
#include <string>
#include <utility>

#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts {

// log(sum(exp(x))) over axes (all when nullopt), shifted by the detached max; integer and
// bool input give float32. An empty reduction gives -inf.
Tensor logsumexp(const Tensor& x, const Axes& axes, bool keepdim);

// log(cumsum(exp(x))) along dim, shifted by the detached max of each slice; a 0-d or empty x
// gives a copy.
Tensor logcumsumexp(const Tensor& x, int64_t dim);

// x sorted along dim 0 (values only; their gradient flows back to where they came from).
Tensor msort(const Tensor& x);

// The bucket index (int64, int32 with out_int32) of each value of x among the sorted 1-D
// boundaries: with right=false the i such that boundaries[i-1] < x <= boundaries[i].
Tensor bucketize(const Tensor& x, const Tensor& boundaries, bool out_int32, bool right);

// Counts of each value 0..max(x) (at least minlength of them) of a 1-D non-negative integer x:
// int64, or with weights (x's shape) their sums, in weights' dtype when float32/float64 (else
// float64); differentiable in weights.
Tensor bincount(const Tensor& x, const Tensor* weights, int64_t minlength);

// Histogram of x's values in `bins` equal-width bins over [min, max] (x's range when both are
// equal; values outside are ignored), in x's (floating) dtype. Not differentiable.
Tensor histc(const Tensor& x, int64_t bins, double min, double max);

// Covariance of the rows (variables) of a 1-D or 2-D x whose columns are observations, the
// observations weighted by the optional fweights (integer counts) and aweights; integer input
// is computed in float32. Differentiable. corrcoef: the Pearson coefficients, clipped to [-1, 1].
Tensor cov(const Tensor& x, int64_t correction, const Tensor* fweights, const Tensor* aweights);
Tensor corrcoef(const Tensor& x);

// The trapezoidal rule along dim (its running integral, one shorter along dim): sample points
// x (1-D of y's length along dim, or shaped like y) or constant spacing dx (default 1).
Tensor trapezoid(const Tensor& y, const Tensor* x, std::optional<double> dx, int64_t dim);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor* x, std::optional<double> dx,
                            int64_t dim);

// (values, int64 indices) of the running maximum / minimum along dim: the index of the last
// occurrence of the extreme so far; NaN propagates (the index of the latest NaN).
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);

// (values, indices): the most frequent value along dim (the smallest on ties; NaNs count as
// one value) and the index of its last occurrence.
std::pair<Tensor, Tensor> mode(const Tensor& x, int64_t dim, bool keepdim);

// The q-th quantiles (q a 0-d or 1-D tensor of x's dtype, values in [0, 1]; a 1-D q adds a
// leading dim) along dim, of the flattened x when nullopt. interpolation: linear, lower,
// higher, midpoint or nearest. ignore_nan=false: NaN propagates; true (nanquantile): NaNs are
// skipped (NaN where a slice has no other value).
Tensor quantile(const Tensor& x, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation, bool ignore_nan);

}  // namespace ts
