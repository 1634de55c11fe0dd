// scaled_dot_product_attention (PyTorch's F.scaled_dot_product_attention) as one C++ op that
// picks its path and records its own autograd node (formulas in autograd/formulas_nn.cpp):
//   1. the fused flash kernel (ops/attention.h; CUDA for float16/bfloat16/float32 up to a head
//      dim, CPU only when the settings ask) for no mask, dropout included (Note [Attention
//      dropout]): node FlashAttentionBackward, no score or mask tensor stored;
//   2. causal attention through GEMMs on the block lower triangle (ops/attention_causal.h) for
//      is_causal, no mask, no dropout, float32/float64, L >= 2 blocks: node
//      CausalBlockAttentionBackward;
//   3. matmul, the fused (scaled, optionally causal) softmax kernel, matmul;
//   4. the composite (mask, dropout, dtypes the kernels lack): ops, each recording itself.
// Each fused path's backward runs its backward kernel, or under create_graph the same gradient
// written with ops (Note [Fused nn backward] in autograd/record_nn.h).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace ts::nn {

// Which path serves which call. The defaults are measured (design.md, "Attention"); tests and
// benchmarks change them through _C._set_attention_settings.
struct AttentionSettings {
  bool flash_on_cuda = true;   // the CUDA tensor-core kernel (A/B timing turns it off)
  bool flash_on_cpu = false;   // the CPU reference kernel (the BLAS matmul path is faster)
  int64_t flash_max_head_dim = 128;
  // float32 above this head dim keeps the GEMM paths unless their (N, L, S) float32 score
  // tensor would pass flash_min_score_bytes.
  int64_t flash_max_head_dim_f32 = 64;
  int64_t flash_min_score_bytes = int64_t(1) << 30;
  int64_t causal_block = 64;      // a multiple of 64 rows; applies from two blocks on
  int64_t causal_max_blocks = 8;  // longer L takes larger blocks (at most 8 GEMM calls)
  std::vector<DType> causal_dtypes{DType::Float32, DType::Float64};
  bool causal_contiguous = true;  // copy q/k/v/grad to contiguous for the block GEMMs
  // PyTorch's backend switches (torch.backends.cuda.enable_{math,flash,mem_efficient}_sdp,
  // torch.nn.attention.sdpa_kernel). tessera's paths compute the same function whichever is
  // on; the switches only decide, as in PyTorch, that a call with no backend left to run it
  // (on CPU: neither math nor flash) is a RuntimeError.
  bool math_sdp = true;
  bool flash_sdp = true;
  bool mem_efficient_sdp = true;
};
AttentionSettings& attention_settings();

// A record of the fused paths taken (path "flash" or "causal_block", device, block), kept only
// while tracing is on (tests ask which path a call took).
struct AttentionCall {
  const char* path;
  Device device;
  int64_t block;
};
void set_attention_trace(bool on);
std::vector<AttentionCall> attention_trace();

// query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev). attn_mask (undefined
// when absent): bool (True keeps) or added to the scores; is_causal: query i sees keys j <= i;
// scale defaults to 1/sqrt(E); enable_gqa repeats key/value heads to the query's count; the
// dropout mask comes from the default generator.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa);

// softmax over the last axis with 0 (and zero gradients) for rows a mask hid entirely, as
// PyTorch's sdpa gives (its _safe_softmax); such rows are softmaxed as zeros (finite) and then
// replaced, so no NaN reaches the backward. Rows holding NaN stay NaN. No data-dependent branch
// (asking whether any row is dead would synchronize with a GPU).
Tensor safe_softmax(const Tensor& scores);

// (..., R, C) as the flash kernel's (B, H, R, C): rank <= 4 as it is, more leading dims merged
// into B (a view wherever the strides allow, so q/k/v split from one projection are read in place).
Tensor attention_heads(const Tensor& x);

}  // namespace ts::nn
