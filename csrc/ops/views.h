// View ops: new geometry over the same storage (no copies), plus reshape (a view when the
// strides allow, else a copy).
#pragma once
#include "core/tensor.h"

namespace ts {

Tensor reshape(const Tensor& x, Shape shape, int copy = -1);  // copy: -1 None, 0 False, 1 True
// x.view(shape) / x.view_as(other) (PyTorch): reshape that never copies; where the strides do
// not allow a view, torch's RuntimeError naming `op` and pointing at .reshape().
Tensor view(const Tensor& x, Shape shape, const char* op = "view");
Tensor permute_dims(const Tensor& x, const Shape& axes);
Tensor matrix_transpose(const Tensor& x);  // swaps the last two dims (x.mT)
Tensor transpose_all(const Tensor& x);     // reverses all dims (x.T)
Tensor expand_dims(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x, const Shape& axes);  // only the named size-1 axes
Tensor broadcast_to(const Tensor& x, const Shape& shape);
Tensor flip(const Tensor& x, const Shape& axes);  // empty `axes` with all=true flips all
Tensor flip_all(const Tensor& x);
Tensor moveaxis(const Tensor& x, const Shape& source, const Shape& destination);
// x[..., start:stop:step, ...] along one axis (start/stop already clamped by the caller).
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step);
// x[..., index, ...]: drops the axis.
Tensor select(const Tensor& x, int64_t axis, int64_t index);
// PyTorch's split_with_sizes: consecutive views of x along `axis` with the given lengths
// (non-negative, summing to x.dim(axis)). One autograd node for all pieces, whose backward
// concatenates their gradients (PyTorch's SplitWithSizesBackward), not one zero-filled
// scatter per piece.
std::vector<Tensor> split_with_sizes(const Tensor& x, int64_t axis, const Shape& sizes);
Tensor diagonal(const Tensor& x, int64_t offset, int64_t axis1, int64_t axis2);
// x.view(dtype) (PyTorch): the same bytes read as `dtype`. A different item size rescales the
// last dim, which must be contiguous; not differentiable (the result never requires grad).
Tensor view_dtype(const Tensor& x, DType dtype);
// PyTorch's view_as_real / view_as_complex: a complex tensor's (re, im) pairs as a trailing
// dim of 2 reals, and back; views (no copy). Not recorded: callers add autograd themselves.
Tensor view_as_real(const Tensor& x);
Tensor view_as_complex(const Tensor& x);

// Strides for viewing x (with `strides`) as `shape`, or false when a copy is required.
bool view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& shape,
                  Strides& out);
// Resolves one -1 in `shape` against numel; ValueError when impossible.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op, const Shape& from);

}  // namespace ts
