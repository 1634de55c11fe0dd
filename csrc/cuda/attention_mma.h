// Tensor-core (mma.sync) flash attention for float16/bfloat16 and float32 (3xTF32)
// (cuda/attention_mma.cu), called by cuda/attention_kernels.cu. Pointers are q (N, L, E), k (N,
// S, E), v (N, S, Ev), out/gout (N, L, Ev), dq/dk/dv of q's/k's/v's shapes, each laid out as
// its MmaLayout in the geometry says, and contiguous lse/dd (N, L) float32 (natural log);
// E, Ev <= 128; N, L, S > 0. Each returns the launch's error (cudaSuccess
// when all kernels were queued).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace ts::cuda {

// Where the rows of one (rows, width) matrix n of an operand live, in elements: matrix n of
// N = B * H starts at (n / H) * b + (n % H) * h, consecutive rows are `row` apart, and the
// elements of a row are contiguous. A (B, H, L, E) tensor with unit stride in E gives its
// strides as they stand: (B, L, H, E) memory (q/k/v as views of one projection) needs no copy.
struct MmaLayout {
  int64_t b, h, row;
  __host__ __device__ int64_t at(int64_t n, int64_t H) const { return (n / H) * b + (n % H) * h; }
};

struct MmaGeom {
  int64_t N, H;
  int L, S, E, Ev;
  float scale;
  bool causal;
  MmaLayout q, k, v, o, go, dq, dk, dv;  // o, go: out, grad_out
  // Dropout (Note [Attention dropout] in ops/attention.h): threshold 0 means none.
  uint64_t drop_threshold, drop_seed, drop_offset;
  float drop_scale;
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
