// CUDA kernels of the creation ops (ops/creation.h) that are not copies or fills: tril/triu's
// band mask.
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "ops/creation.h"

namespace ts::cuda {
namespace {

template <class U>
__device__ __forceinline__ U zero_of() {
  return U(0);
}
template <>
__device__ __forceinline__ ulonglong2 zero_of<ulonglong2>() {
  return make_ulonglong2(0, 0);
}

// Zeroes the elements of a contiguous (batch, rows, cols) tensor outside the kept band; the
// element's bytes are moved as an unsigned word of its size (any dtype).
template <class U>
__global__ void tri_zero_kernel(U* p, int64_t rows, int64_t cols, int64_t total, int64_t k,
                                bool upper) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const int64_t c = i % cols, r = (i / cols) % rows;
  if (upper ? c - r < k : c - r > k) p[i] = zero_of<U>();
}

template <class U>
void tri_zero_as(const Tensor& out, int64_t k, bool upper) {
  const int64_t nd = out.ndim(), total = out.numel();
  tri_zero_kernel<U>
      <<<static_cast<unsigned>((total + 255) / 256), 256, 0, current_stream(out.device())>>>(
          reinterpret_cast<U*>(out.data_ptr()), out.dim(nd - 2), out.dim(nd - 1), total, k, upper);
  TS_CUDA_CHECK_LAUNCH();
}

void tri_zero_cuda(const Tensor& out, int64_t k, bool upper) {
  switch (out.itemsize()) {
    case 1:
      return tri_zero_as<uint8_t>(out, k, upper);
    case 2:
      return tri_zero_as<uint16_t>(out, k, upper);
    case 4:
      return tri_zero_as<uint32_t>(out, k, upper);
    case 8:
      return tri_zero_as<unsigned long long>(out, k, upper);
    default:
      return tri_zero_as<ulonglong2>(out, k, upper);
  }
}

}  // namespace

TS_REGISTER_KERNEL(tri_zero_stub, CUDA, &tri_zero_cuda);

}  // namespace ts::cuda
