// Operand dtype checks of PyTorch's nn ops that take a weight (linear, bilinear, cdist, prelu,
// layer_norm, group_norm, nll_loss, cross_entropy, multi_margin_loss, binary_cross_entropy,
// scaled_dot_product_attention):
// they do not promote, PyTorch raises on mixed dtypes. The array-API namespace (ts.matmul,
// ts.add, ...) promotes, as the standard says.
#pragma once
#include <initializer_list>
#include <utility>

#include "core/tensor.h"

namespace ts::nn {

// Raises TypeError (a RuntimeError, PyTorch's class) naming the op and both dtypes unless every
// defined operand in `others` (name, tensor) has the dtype of `x` (called `x_name`).
void check_same_dtype(const char* op, const char* x_name, const Tensor& x,
                      std::initializer_list<std::pair<const char*, const Tensor*>> others);

// Normalization parameters (weight, bias): the input's dtype, or float32 for all of them when the
// input is float16/bfloat16 (PyTorch's mixed precision; the output keeps the input's dtype).
// Returns whether that mixed case applies.
// The names default to weight and bias (batch_norm checks running_mean and running_var too).
bool check_norm_param_dtypes(const char* op, const Tensor& x, const Tensor& weight,
                             const Tensor& bias, const char* weight_name = "weight",
                             const char* bias_name = "bias");

}  // namespace ts::nn
