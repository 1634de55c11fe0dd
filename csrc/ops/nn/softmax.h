// softmax and log_softmax over any dim (PyTorch's F.softmax / F.log_softmax): one fused kernel
// pass per row (ops/nn_fused.h's softmax_last) and one autograd node whose backward is the
// fused backward kernel, or under create_graph the same gradient written with ops
// (autograd/formulas_nn.cpp).
#pragma once
#include <optional>

#include "core/tensor.h"

namespace ts::nn {

// dim: PyTorch's legacy implicit rule when absent (0 for 0-, 1- and 3-D inputs, else 1).
// dtype: the input is cast to it first (recorded); without it, CUDA autocast runs it in
// float32 (PyTorch's list). Integer inputs compute in float32; complex ones raise TypeError.
Tensor softmax(const Tensor& x, std::optional<int64_t> dim, std::optional<DType> dtype,
               bool log = false);

// Attention's softmax(scale * scores) over the last axis of (..., L, S) floating scores; with
// `causal`, query i sees keys j <= i (no mask tensor). One node; its backward is the fused
// kernel's (ops/nn_fused.h), or under create_graph scale * softmax's gradient with ops.
Tensor attention_softmax(const Tensor& scores, double scale, bool causal);

// The values over a normalized dim without recording (the kernel, moving dim last and back).
Tensor softmax_values(const Tensor& x, int64_t dim, bool log);
// The input gradient from the output y and its gradient gy, without recording.
Tensor softmax_backward_values(const Tensor& y, const Tensor& gy, int64_t dim, bool log);

}  // namespace ts::nn
