#include "cuda/cuda_check.h"
#include "cuda/fft_scale.h"

namespace ts::cuda {
namespace {

template <class T>
__global__ void scale_kernel(T* p, int64_t count, T scale) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    p[i] *= scale;
}

template <class T>
void launch(T* p, int64_t count, T scale, cudaStream_t stream) {
  const int64_t blocks = (count + 255) / 256;
  scale_kernel<T>
      <<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(p, count, scale);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void scale_reals(void* p, int64_t count, bool dbl, double scale, cudaStream_t stream) {
  if (count == 0 || scale == 1.0) return;
  if (dbl)
    launch(static_cast<double*>(p), count, scale, stream);
  else
    launch(static_cast<float*>(p), count, static_cast<float>(scale), stream);
}

}  // namespace ts::cuda
