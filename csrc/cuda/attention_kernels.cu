// CUDA flash attention (ops/attention.h) for float16/bfloat16/float32 (float64 takes the
// composite path): the tensor-core kernels of cuda/attention_mma.cu (float32 by 3xTF32, with
// float32 accuracy), plus the backward's D = rowsum(dO * O) here. Head dims up to 128. The
// kernels read and write the (B, H, rows, width) tensors the op gives through their strides.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/attention_mma.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/cudnn_attention.h"
#include "cuda/device_types.cuh"
#include "ops/attention.h"

namespace ts::cuda {
namespace {

constexpr int kMaxHeadDim = 128;

// D[r] = dO[r] . O[r] for the N * L rows r = n * L + l, one warp per row.
template <class T>
__global__ void __launch_bounds__(256)
    rowwise_dot(const T* __restrict__ go, const T* __restrict__ o, float* __restrict__ d,
                MmaGeom g) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * 8 + threadIdx.y;
  if (r >= g.N * g.L) return;  // the whole warp leaves together
  const int64_t n = r / g.L, l = r % g.L;
  const T* gr = go + g.go.at(n, g.H) + l * g.go.row;
  const T* orow = o + g.o.at(n, g.H) + l * g.o.row;
  float s = 0.f;
  for (int c = threadIdx.x; c < g.Ev; c += 32)
    s += dconvert<float>(gr[c]) * dconvert<float>(orow[c]);
#pragma unroll
  for (int w = 16; w > 0; w /= 2) s += __shfl_xor_sync(0xffffffffu, s, w);
  if (threadIdx.x == 0) d[r] = s;
}

constexpr uint32_t kCudaSet = kHalfSet | (1u << static_cast<int>(DType::Float32));

// The (B, H, rows, width) tensor's strides as an MmaLayout (the op gives unit stride in width).
MmaLayout layout_of(const Tensor& x) {
  return MmaLayout{x.strides()[0], x.strides()[1], x.strides()[2]};
}

MmaGeom geom_of(const Tensor& q, const Tensor& k, const Tensor& v, double scale, bool causal,
                const AttentionDropout& drop, const char* op) {
  const int64_t L = q.dim(2), S = k.dim(2), E = q.dim(3), Ev = v.dim(3);
  TS_CHECK(E <= kMaxHeadDim && Ev <= kMaxHeadDim, NotImplementedError, op, ": head dims up to ",
           kMaxHeadDim, " on CUDA, got E=", E, " and Ev=", Ev,
           " (scaled_dot_product_attention takes the composite path above that)");
  TS_CHECK(L < (int64_t{1} << 30) && S < (int64_t{1} << 30), ValueError, op,
           ": sequence lengths L=", L, ", S=", S, " too long for the CUDA kernel");
  const int64_t N = q.dim(0) * q.dim(1);
  // The kernels run one block per (batch, 64-row tile), all in the grid's x.
  const int64_t blocks = N * ((std::max(L, S) + 63) / 64);
  TS_CHECK(blocks < (int64_t{1} << 31), ValueError, op,
           ": too many (batch, tile) blocks for one CUDA grid: ", blocks);
  MmaGeom g{};
  g.N = N;
  g.H = q.dim(1);
  g.L = static_cast<int>(L);
  g.S = static_cast<int>(S);
  g.E = static_cast<int>(E);
  g.Ev = static_cast<int>(Ev);
  g.scale = static_cast<float>(scale);
  g.causal = causal;
  g.q = layout_of(q);
  g.k = layout_of(k);
  g.v = layout_of(v);
  g.drop_threshold = drop.threshold;
  g.drop_seed = drop.seed;
  g.drop_offset = drop.offset;
  g.drop_scale = static_cast<float>(drop.scale);
  return g;
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
                          const Tensor& lse, double scale, bool causal,
                          const AttentionDropout& drop) {
  if (cudnn_sdpa_forward(q, k, v, out, lse, scale, causal, drop)) return;  // Note [cuDNN attention]
  attention_path_used() = "cuda_flash";
  const char* op = "flash_attention";
  MmaGeom g = geom_of(q, k, v, scale, causal, drop, op);
  g.o = layout_of(out);
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
                                   double scale, bool causal, const AttentionDropout& drop) {
  if (cudnn_sdpa_backward(q, k, v, out, lse, gout, dq, dk, dv, scale, causal, drop)) return;
  attention_path_used() = "cuda_flash";
  const char* op = "flash_attention_backward";
  MmaGeom g = geom_of(q, k, v, scale, causal, drop, op);
  g.o = layout_of(out);
  g.go = layout_of(gout);
  g.dq = layout_of(dq);
  g.dk = layout_of(dk);
  g.dv = layout_of(dv);
  const int dev = q.device().index;
  DeviceGuard guard(dev);
  cudaStream_t st = current_stream(dev);
  const Tensor dd = Tensor::empty(lse.shape(), DType::Float32, q.device());
  cuda_visit<kCudaSet>(q.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t rows = g.N * g.L;
    rowwise_dot<T><<<static_cast<unsigned>((rows + 7) / 8), dim3(32, 8), 0, st>>>(
        cptr<T>(gout), cptr<T>(out), mptr<float>(dd), g);
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
