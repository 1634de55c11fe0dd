// CUDA flash attention (ops/attention.h) for float16/bfloat16/float32 (float64 takes the
// composite path): the tensor-core kernels of cuda/attention_mma.cu (float32 by 3xTF32, with
// float32 accuracy), plus the backward's D = rowsum(dO * O) here. Head dims up to 128.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/attention_mma.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "ops/attention.h"

namespace ts::cuda {
namespace {

constexpr int kMaxHeadDim = 128;

// D[r] = dO[r] . O[r], one warp per row.
template <class T>
__global__ void __launch_bounds__(256)
    rowwise_dot(const T* __restrict__ go, const T* __restrict__ o, float* __restrict__ d,
                int64_t rows, int Ev) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * 8 + threadIdx.y;
  if (r >= rows) return;  // the whole warp leaves together
  float s = 0.f;
  for (int c = threadIdx.x; c < Ev; c += 32)
    s += dconvert<float>(go[r * Ev + c]) * dconvert<float>(o[r * Ev + c]);
#pragma unroll
  for (int w = 16; w > 0; w /= 2) s += __shfl_xor_sync(0xffffffffu, s, w);
  if (threadIdx.x == 0) d[r] = s;
}

constexpr uint32_t kCudaSet = kHalfSet | (1u << static_cast<int>(DType::Float32));

MmaGeom geom_of(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                const char* op) {
  const int64_t L = q.dim(1), S = k.dim(1), E = q.dim(2), Ev = v.dim(2);
  TS_CHECK(E <= kMaxHeadDim && Ev <= kMaxHeadDim, NotImplementedError, op, ": head dims up to ",
           kMaxHeadDim, " on CUDA, got E=", E, " and Ev=", Ev,
           " (scaled_dot_product_attention takes the composite path above that)");
  TS_CHECK(L < (int64_t{1} << 30) && S < (int64_t{1} << 30), ValueError, op,
           ": sequence lengths L=", L, ", S=", S, " too long for the CUDA kernel");
  // The kernels run one block per (batch, 64-row tile), all in the grid's x.
  const int64_t blocks = q.dim(0) * ((std::max(L, S) + 63) / 64);
  TS_CHECK(blocks < (int64_t{1} << 31), ValueError, op,
           ": too many (batch, tile) blocks for one CUDA grid: ", blocks);
  return MmaGeom{q.dim(0),
                 static_cast<int>(L),
                 static_cast<int>(S),
                 static_cast<int>(E),
                 static_cast<int>(Ev),
                 static_cast<float>(scale),
                 causal};
}

template <class T>
const T* cptr(const Tensor& x) {
  return reinterpret_cast<const T*>(x.data_ptr());
}
template <class T>
T* mptr(const Tensor& x) {
  return reinterpret_cast<T*>(x.data_ptr());
}

void flash_attention_cuda(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                          const Tensor& lse, double scale, bool causal) {
  const char* op = "flash_attention";
  const MmaGeom g = geom_of(q, k, v, scale, causal, op);
  const int dev = q.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  cuda_visit<kCudaSet>(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    TS_CUDA_CHECK(flash_mma_forward<T>(cptr<T>(q), cptr<T>(k), cptr<T>(v), mptr<T>(out),
                                       mptr<float>(lse), g, st));
  });
}

void flash_attention_backward_cuda(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& out, const Tensor& lse, const Tensor& gout,
                                   const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                   double scale, bool causal) {
  const char* op = "flash_attention_backward";
  const MmaGeom g = geom_of(q, k, v, scale, causal, op);
  const int dev = q.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  const Tensor dd = Tensor::empty(lse.shape(), DType::Float32, q.device());
  cuda_visit<kCudaSet>(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = g.N * g.L;
    rowwise_dot<T><<<static_cast<unsigned>((rows + 7) / 8), dim3(32, 8), 0, st>>>(
        cptr<T>(gout), cptr<T>(out), mptr<float>(dd), rows, g.Ev);
    TS_CUDA_CHECK_LAUNCH();
    TS_CUDA_CHECK(flash_mma_backward<T>(cptr<T>(q), cptr<T>(k), cptr<T>(v), cptr<T>(gout),
                                        cptr<float>(lse), cptr<float>(dd), mptr<T>(dq), mptr<T>(dk),
                                        mptr<T>(dv), g, st));
  });
}

}  // namespace

TS_REGISTER_KERNEL(flash_attention_stub, CUDA, &flash_attention_cuda);
TS_REGISTER_KERNEL(flash_attention_backward_stub, CUDA, &flash_attention_backward_cuda);

}  // namespace ts::cuda
