// CUDA kernel of the embedding lookup's forward: rows of the weight at device indices, each
// index checked against [0, num) and reported as a deferred device error (Note [Deferred
// device errors]) instead of read out of bounds.
#include <cstdint>

#include "core/device_backend.h"
#include "cuda/cuda_state.h"
#include "cuda/device_error.h"
#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/nn/embedding.h"

namespace ts::cuda {
namespace {

struct alignas(16) Vec16 {
  uint64_t lo, hi;
};

// y (n, cols) = w's rows idx[b]; w's element (i, j) at i * ws0 + j * ws1 (units of E). A bad
// index is reported once per row (by its first column) and clamped, so nothing outside w is read.
template <class E>
__global__ void __launch_bounds__(kBlock)
    embedding_rows_kernel(const E* w, E* y, const int64_t* idx, int64_t n, int64_t cols,
                          int64_t ws0, int64_t ws1, int64_t num, DeviceErrorSlot* slot,
                          unsigned* claim, int32_t code) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  if (t >= n * cols) return;
  const int64_t b = t / cols, j = t - b * cols;
  int64_t i = idx[b];
  if (i < 0 || i >= num) {
    if (j == 0) report_device_error(slot, claim, code, i, 0, num);
    i = i < 0 ? 0 : num - 1;
  }
  y[t] = w[i * ws0 + j * ws1];
}

template <class E>
void launch(const Tensor& w, const Tensor& flat, const Tensor& out, int64_t cols, int64_t ws0,
            int64_t ws1) {
  const int64_t n = flat.numel(), total = n * cols;
  if (total == 0) return;
  const Device d = out.device();
  static const int32_t code = device_error_code("embedding", "index");
  const unsigned grid = static_cast<unsigned>((total + kBlock - 1) / kBlock);
  embedding_rows_kernel<E><<<grid, kBlock, 0, current_stream(d.index)>>>(
      reinterpret_cast<const E*>(w.data_ptr()), reinterpret_cast<E*>(out.data_ptr()),
      flat.data<int64_t>(), n, cols, ws0, ws1, w.dim(0), device_error_slot(d.index),
      device_error_claim(d.index), code);
  TS_CUDA_CHECK_LAUNCH();
}

void embedding_gather_cuda(const Tensor& w, const Tensor& flat, const Tensor& out) {
  DeviceGuard g(out.device().index);
  const int64_t item = static_cast<int64_t>(itemsize(w.dtype()));
  const int64_t dim = w.dim(1), s0 = w.strides()[0], s1 = w.strides()[1];
  const auto addr = reinterpret_cast<uintptr_t>(w.data_ptr());
  // Rows of whole 16-byte units: copied as such (dim 384 float32 = 96 units per row).
  if ((s1 == 1 || dim == 1) && (dim * item) % 16 == 0 && (s0 * item) % 16 == 0 && addr % 16 == 0 &&
      reinterpret_cast<uintptr_t>(out.data_ptr()) % 16 == 0)
    return launch<Vec16>(w, flat, out, dim * item / 16, s0 * item / 16, 1);
  switch (item) {
    case 1:
      return launch<uint8_t>(w, flat, out, dim, s0, s1);
    case 2:
      return launch<uint16_t>(w, flat, out, dim, s0, s1);
    case 4:
      return launch<uint32_t>(w, flat, out, dim, s0, s1);
    case 8:
      return launch<uint64_t>(w, flat, out, dim, s0, s1);
    default:
      return launch<Vec16>(w, flat, out, dim, s0, s1);
  }
}

}  // namespace

using ts::nn::embedding_gather_stub;
TS_REGISTER_KERNEL(embedding_gather_stub, CUDA, &embedding_gather_cuda);

}  // namespace ts::cuda
