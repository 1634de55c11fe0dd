// Flash attention through cuDNN 9's fused SDPA (Note [cuDNN attention] in ops/attention.h and
// cuda/cudnn_attention.cpp). cuda/attention_kernels.cu calls these first: each returns true
// when cuDNN computed the result, false (having done nothing) when tessera's kernels must run.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "core/tensor.h"
#include "ops/attention.h"

namespace ts::cuda {

// The tensors the op gives its kernels (ops/attention.h): q (B, H, L, E), k (B, H, S, E),
// v (B, H, S, Ev), out (B, H, L, Ev) with unit stride along the last dim, lse (B, H, L)
// float32 contiguous.
bool cudnn_sdpa_forward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                        const Tensor& lse, double scale, bool causal, const AttentionDropout& drop);
// With dropout this runs exactly when the forward that produced `lse` ran on cuDNN (then it
// must, whatever the switches say now: only cuDNN regenerates its mask), and raises if cuDNN
// fails; without dropout it runs where cuDNN is on and takes the problem.
bool cudnn_sdpa_backward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                         const Tensor& lse, const Tensor& gout, const Tensor& dq, const Tensor& dk,
                         const Tensor& dv, double scale, bool causal,
                         const AttentionDropout& drop);

// (cuda/cudnn_attention_rng.cu) Writes cuDNN's dropout {seed, offset} int64 words for tessera's
// (seed, offset) pair (plain or graph-safe) to device memory `words`, on stream `st`.
cudaError_t cudnn_dropout_seed(uint64_t seed, uint64_t offset, int64_t* words, cudaStream_t st);

}  // namespace ts::cuda
