// Causal attention through GEMMs over the block lower triangle of the scores (Note [Causal
// block attention] in attention_causal.cpp): the matmul + fused softmax path of
// scaled_dot_product_attention(is_causal=True) without the GEMM work on masked score blocks.
// tessera/nn/functional/attention.py wraps the pair in an autograd Function.
#pragma once
#include <tuple>

#include "core/tensor.h"

namespace ts {

// q (..., L, E), k (..., S, E), v (..., S, Ev) with equal batch dims, one floating dtype and
// device, L, S > 0, any strides. Returns (out (..., L, Ev), p (..., L, S)): p is the causal
// softmax of scale * q k^T (0 at masked keys) and out = p v; p is defined only on each row
// block's key prefix (row i: keys below roundup(i + 1, block)), the rest is unspecified.
std::tuple<Tensor, Tensor> causal_block_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                                  double scale, int64_t block);
// (dq, dk, dv) from the forward's p and the output gradient g (..., L, Ev).
std::tuple<Tensor, Tensor, Tensor> causal_block_attention_backward(const Tensor& q, const Tensor& k,
                                                                   const Tensor& v, const Tensor& p,
                                                                   const Tensor& g, double scale,
                                                                   int64_t block);

}  // namespace ts
