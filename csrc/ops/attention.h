// Fused (flash-style) scaled dot product attention: softmax(scale * q k^T [causal]) v without
// materializing the (L, S) scores. Kernels: cpu/attention_kernels.cpp (the reference, blocked
// over keys with an online softmax) and cuda/attention_kernels.cu (FlashAttention-2 layout).
// tessera/nn/functional/attention.py wraps the pair in an autograd Function.
#pragma once
#include <string>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// Note [Attention dropout]: dropout on the attention probabilities inside the fused kernels,
// never stored. Query i of matrix n (n = b * H + h) keeps key j when
// rng::attention_keep_at(n, i, j, L, S, threshold, seed, offset) holds (Note [Attention dropout
// mask] in kernels/random_math.h: one Philox block decides four elements, so the kernels call the
// generator once per four scores); attention_dropout_mask builds the same mask as a tensor for
// the composite (create_graph) backward and the tests. The forward keeps
// the softmax statistics of the undropped probabilities (lse) and accumulates
// out_i = sum_j keep_ij * scale * p_ij v_j; the backward regenerates keep from (seed, offset):
// dV += (keep * scale * P)^T dO, dS = P * (keep * scale * dO V^T - D) with D = rowsum(dO * O)
// as without dropout (sum_j p_ij keep_ij scale (dO_i . v_j) = dO_i . O_i).
struct AttentionDropout {
  uint64_t threshold = 0;  // round(p 2^32); 0: no dropout
  double scale = 1.0;      // 1 / (1 - p), 0 for p = 1
  uint64_t seed = 0, offset = 0;
  bool on() const { return threshold != 0; }
};
AttentionDropout attention_dropout(double p, uint64_t seed, uint64_t offset);

// The (N, L, S) tensor of the factors the fused kernels apply for dropout (p, seed, offset):
// 1 / (1 - p) where a score is kept, 0 where dropped, in `dtype` on `device`.
Tensor attention_dropout_mask(int64_t N, int64_t L, int64_t S, double p, uint64_t seed,
                              uint64_t offset, DType dtype, Device device);

// Kernels see q (B, H, L, E), k (B, H, S, E), v (B, H, S, Ev), out (B, H, L, Ev) of one dtype
// and a contiguous lse (B, H, L) in the statistics dtype (float64 for float64, else float32);
// B * H, L, S > 0. On the CPU every tensor is contiguous (the reference kernel reads them as
// (B * H, L, E)); on other devices they have unit stride along E and any other strides (q/k/v
// views of one projection are read in place), and the op lays outputs out (B, L, H, X).
// `causal` is PyTorch's top-left aligned is_causal: query i sees keys j <= i.
using FlashAttentionKernel = void (*)(const Tensor& q, const Tensor& k, const Tensor& v,
                                      const Tensor& out, const Tensor& lse, double scale,
                                      bool causal, const AttentionDropout& drop);
// dq, dk, dv of q's, k's, v's shapes from the forward's out and lse and grad_out (N, L, Ev).
using FlashAttentionBackwardKernel = void (*)(const Tensor& q, const Tensor& k, const Tensor& v,
                                              const Tensor& out, const Tensor& lse,
                                              const Tensor& gout, const Tensor& dq,
                                              const Tensor& dk, const Tensor& dv, double scale,
                                              bool causal, const AttentionDropout& drop);

TS_DECLARE_STUB(FlashAttentionKernel, flash_attention_stub);
TS_DECLARE_STUB(FlashAttentionBackwardKernel, flash_attention_backward_stub);

// Note [cuDNN attention]: on CUDA, float16/bfloat16 flash attention runs cuDNN 9's fused
// SDPA (cuda/cudnn_attention.cpp) where cuDNN loads and takes the problem, else tessera's
// kernels. `cudnn_sdp` is ts.backends.cuda.enable_cudnn_sdp's switch (cuDNN also needs
// ts.backends.cudnn.enabled); attention_path_used() names what ran the calling thread's last
// attention kernel, forward or backward: "cpu", "cuda_flash", "cudnn" ("none" before the
// first). The CUDA backend fills the hooks: `from_cudnn_dropout` tells whether an lse came
// from a cuDNN forward with dropout (its mask is cuDNN's, which neither tessera's kernels nor
// the dropout op can regenerate), `status` why the last cuDNN attention problem was declined.
struct CudnnAttention {
  bool enabled = true;
  bool (*from_cudnn_dropout)(const Tensor& lse) = nullptr;
  std::string (*status)() = nullptr;
};
CudnnAttention& cudnn_attention();
const char*& attention_path_used();

// q, k, v are (B, H, L, E), (B, H, S, E), (B, H, S, Ev) or the 3-D (N, L, E) forms. Returns
// (out (..., L, Ev) in q's dtype, lse (..., L) = logsumexp of each query row's scaled, masked
// scores; float64 for float64 inputs, float32 otherwise). S == 0 gives out = 0 and lse = -inf,
// as the composite softmax-then-matmul would give 0. dropout_p > 0 drops probabilities as
// Note [Attention dropout] says, from (seed, offset).
std::tuple<Tensor, Tensor> flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                           double scale, bool causal, double dropout_p = 0.0,
                                           uint64_t seed = 0, uint64_t offset = 0);
// Returns (dq, dk, dv) of q's, k's, v's shapes.
std::tuple<Tensor, Tensor, Tensor> flash_attention_backward(const Tensor& q, const Tensor& k,
                                                            const Tensor& v, const Tensor& out,
                                                            const Tensor& lse, const Tensor& gout,
                                                            double scale, bool causal,
                                                            double dropout_p = 0.0,
                                                            uint64_t seed = 0, uint64_t offset = 0);

}  // namespace ts
