// PyTorch's unfold (im2col: sliding local blocks of (N, C, H, W) as (N, C*kh*kw, L)) and fold
// (col2im, its adjoint: the blocks summed back into (N, C, *output_size)), batched or not.
// One fused kernel each way (ops/nn_fused.h) and one autograd node whose formula is the other
// op, so gradients of every order work. Floating input runs in its dtype; other dtypes go
// through float64 and back (PyTorch refuses integers; tessera keeps them exact to 2^53).
#pragma once
#include "core/tensor.h"
#include "ops/nn_fused.h"

namespace ts::nn {

// kernel_size, dilation, padding, stride: one value or two.
Tensor unfold(const Tensor& input, const Shape& kernel_size, const Shape& dilation,
              const Shape& padding, const Shape& stride);
Tensor fold(const Tensor& input, const Shape& output_size, const Shape& kernel_size,
            const Shape& dilation, const Shape& padding, const Shape& stride);

// The recorded pieces (x batched (N, C, H, W), cols (N, C*kh*kw, L)).
Tensor im2col_op(const Tensor& x, const Window2d& win);
Tensor col2im_op(const Tensor& cols, int64_t channels, int64_t h, int64_t w, const Window2d& win);

}  // namespace ts::nn
