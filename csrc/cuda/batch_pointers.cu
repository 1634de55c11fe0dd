#include "cuda/batch_pointers.h"
#include "cuda/cuda_check.h"

namespace ts::cuda {
namespace {

__global__ void batch_pointers_kernel(BatchWalk w, int64_t count, const void** ptrs) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  int64_t rest = i, off[3] = {0, 0, 0};
  for (int d = w.ndim - 1; d >= 0; --d) {
    const int64_t q = rest / w.sizes[d], r = rest - q * w.sizes[d];
    rest = q;
    for (int k = 0; k < 3; ++k) off[k] += r * w.strides[k][d];
  }
  for (int k = 0; k < 3; ++k) ptrs[k * count + i] = w.base[k] + off[k];
}

}  // namespace

void launch_batch_pointers(const BatchWalk& walk, int64_t count, const void** ptrs,
                           cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>((count + 255) / 256);
  batch_pointers_kernel<<<grid, 256, 0, stream>>>(walk, count, ptrs);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace ts::cuda
