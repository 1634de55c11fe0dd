// CUDA kernels of grid_sample (ops/nn/grid_sample.h), forward and backward, 4-D and 5-D input:
// one thread per output point running the per-point math of kernels/grid_sample_math.h, the
// CPU kernels' (cpu/grid_sample_kernels.cpp) to rounding (Note [Native grid sampling]). The
// 16-bit floats compute in float; the input's gradient is scattered with atomicAdd, so its
// sums may differ from the CPU's in the last bits (as PyTorch's CUDA kernel).
#include "cuda/loops.cuh"
#include "kernels/acc_type.h"
#include "kernels/grid_sample_math.h"
#include "ops/nn/grid_sample.h"

namespace ts::cuda {
namespace {

constexpr int kThreads = 256;

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <int K, class T, class A>
__global__ void grid_sample_kernel(const T* x, const T* grid, T* out, gs::Geom geo, gs::Params p,
                                   int64_t total) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t n = i / geo.out_plane, q = i - n * geo.out_plane;
  gs::forward_point<K, T, A>(x + n * geo.C * geo.in_plane, grid + i * K,
                             out + n * geo.C * geo.out_plane + q, geo, p);
}

struct AtomicAdd {
  template <class T, class A>
  __device__ __forceinline__ void operator()(T* at, A v) const {
    atomicAdd(at, static_cast<T>(v));
  }
};

template <int K, class T, class A>
__global__ void grid_sample_backward_kernel(const T* gy, const T* x, const T* grid, T* gx, T* gg,
                                            gs::Geom geo, gs::Params p, int64_t total) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t n = i / geo.out_plane, q = i - n * geo.out_plane;
  const int64_t img = geo.C * geo.in_plane;
  gs::backward_point<K, T, A>(gy + n * geo.C * geo.out_plane + q, x + n * img,
                              gx ? gx + n * img : nullptr, grid + i * K, gg ? gg + i * K : nullptr,
                              geo, p, AtomicAdd{});
}

void grid_sample_cuda(const Tensor& x, const Tensor& grid, const Tensor& out, const gs::Params& p) {
  const gs::Geom geo = nn::grid_sample_geom(x, grid);
  const int64_t total = x.dim(0) * geo.out_plane;
  if (total == 0) return;
  cuda_visit<kFloatSet>(x.dtype(), "grid_sample", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto* kernel = x.ndim() == 4 ? grid_sample_kernel<2, T, A> : grid_sample_kernel<3, T, A>;
    kernel<<<blocks(total), kThreads, 0, current_stream(x.device())>>>(
        x.data<T>(), grid.data<T>(), out.data<T>(), geo, p, total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void grid_sample_backward_cuda(const Tensor& gy, const Tensor& x, const Tensor& grid,
                               const Tensor& gx, const Tensor& gg, const gs::Params& p) {
  const gs::Geom geo = nn::grid_sample_geom(x, grid);
  const int64_t total = x.dim(0) * geo.out_plane;
  if (total == 0) return;
  cuda_visit<kFloatSet>(x.dtype(), "grid_sample_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    auto* kernel =
        x.ndim() == 4 ? grid_sample_backward_kernel<2, T, A> : grid_sample_backward_kernel<3, T, A>;
    kernel<<<blocks(total), kThreads, 0, current_stream(x.device())>>>(
        gy.data<T>(), x.data<T>(), grid.data<T>(), gx.defined() ? gx.data<T>() : nullptr,
        gg.defined() ? gg.data<T>() : nullptr, geo, p, total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

TS_REGISTER_KERNEL(grid_sample_stub, CUDA, &grid_sample_cuda);
TS_REGISTER_KERNEL(grid_sample_backward_stub, CUDA, &grid_sample_backward_cuda);

}  // namespace ts::cuda
