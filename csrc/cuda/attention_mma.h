// Tensor-core (mma.sync) flash attention for float16/bfloat16 and float32 (3xTF32)
// (cuda/attention_mma.cu), called by cuda/attention_kernels.cu. Pointers are contiguous q (N, L,
// E), k (N, S, E), v (N, S, Ev), out/gout (N, L, Ev), lse/dd (N, L) float32 (natural log), dq/dk/dv
// of q's/k's/v's shapes; E, Ev <= 128; N, L, S > 0. Each returns the launch's error (cudaSuccess
// when all kernels were queued).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ts::cuda {

struct MmaGeom {
  int64_t N;
  int L, S, E, Ev;
  float scale;
  bool causal;
};

// T is __half, __nv_bfloat16 or float.
template <class T>
cudaError_t flash_mma_forward(const T* q, const T* k, const T* v, T* out, float* lse,
                              const MmaGeom& g, cudaStream_t st);

// dd: (N, L) float32 rowsum(gout * out), computed by the caller.
template <class T>
cudaError_t flash_mma_backward(const T* q, const T* k, const T* v, const T* gout, const float* lse,
                               const float* dd, T* dq, T* dk, T* dv, const MmaGeom& g,
                               cudaStream_t st);

}  // namespace ts::cuda
