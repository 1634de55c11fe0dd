// Reductions of the array API: sum, prod, mean, var, std, max, min, all, any, count_nonzero,
// argmax, argmin. Geometry in iter/reduce_iter.h (Note [Reduction plan]); CPU kernels in
// cpu/reduce_kernels.cpp, cpu/minmax_kernels.cpp, cpu/logical_reduce_kernels.cpp.
#pragma once
#include <optional>

#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "iter/reduce_iter.h"

namespace ts {

// `divisor` scales each accumulated result before it is rounded to the output dtype (mean
// divides by the count in the accumulator's precision; 1 otherwise).
using ReduceKernel = void (*)(const ReducePlan&, DType in, DType out, double divisor);
// Index of the first max/min along one dim: `plan` has a single reduced dim walked in order.
using ArgReduceKernel = void (*)(const ReducePlan&, DType in);
// out = sqrt(out) in place over a contiguous float tensor (std from var).
using SqrtKernel = void (*)(const Tensor&);

TS_DECLARE_STUB(ReduceKernel, sum_stub);
TS_DECLARE_STUB(ReduceKernel, sum_squares_stub);  // sum(x * x) over float32/float64 (var)
TS_DECLARE_STUB(ReduceKernel, prod_stub);
TS_DECLARE_STUB(ReduceKernel, max_stub);
TS_DECLARE_STUB(ReduceKernel, min_stub);
TS_DECLARE_STUB(ReduceKernel, all_stub);
TS_DECLARE_STUB(ReduceKernel, any_stub);
TS_DECLARE_STUB(ReduceKernel, count_nonzero_stub);
TS_DECLARE_STUB(ArgReduceKernel, argmax_stub);
TS_DECLARE_STUB(ArgReduceKernel, argmin_stub);
TS_DECLARE_STUB(SqrtKernel, std_sqrt_stub);

// Axes: nullopt means all axes. Negative axes count from the end; duplicates are an error.
using Axes = std::optional<Shape>;

// The dtype sum/prod/cumulative_sum produce by default: signed ints and bool -> int64,
// unsigned -> uint64, floats and complex keep theirs (the array API standard's rule).
DType sum_dtype(DType in);
// The reduced-dims mask of `axes` over ndim dims; IndexError/ValueError naming `op`.
SmallVec<bool, 8> axes_mask(const Axes& axes, int64_t ndim, const char* op);

Tensor sum(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype);
Tensor prod(const Tensor& x, const Axes& axes, bool keepdims, std::optional<DType> dtype);
Tensor mean(const Tensor& x, const Axes& axes, bool keepdims);
Tensor var(const Tensor& x, const Axes& axes, double correction, bool keepdims);
Tensor std(const Tensor& x, const Axes& axes, double correction, bool keepdims);
Tensor max(const Tensor& x, const Axes& axes, bool keepdims);
Tensor min(const Tensor& x, const Axes& axes, bool keepdims);
// torch.amax / amin: max / min whose gradient is shared evenly by the tied extrema along
// every reduced axis, a single one included (max/min along one axis give it to the first).
Tensor amax(const Tensor& x, const Axes& axes, bool keepdims);
Tensor amin(const Tensor& x, const Axes& axes, bool keepdims);
Tensor all(const Tensor& x, const Axes& axes, bool keepdims);
Tensor any(const Tensor& x, const Axes& axes, bool keepdims);
Tensor count_nonzero(const Tensor& x, const Axes& axes, bool keepdims);
// axis: nullopt flattens (C order) first.
Tensor argmax(const Tensor& x, std::optional<int64_t> axis, bool keepdims);
Tensor argmin(const Tensor& x, std::optional<int64_t> axis, bool keepdims);

}  // namespace ts
