#include "cuda/cuda_state.h"

#include <mutex>
#include <vector>

#include "cuda/cuda_check.h"

namespace ts::cuda {

void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  // Clear the sticky-free error state so that later calls are not blamed for this one.
  (void)cudaGetLastError();
  throw RuntimeError(str("CUDA error ", cudaGetErrorName(e), " (", cudaGetErrorString(e), ") in ",
                         expr, " at ", file, ":", line));
}

int device_count() {
  static const int n = [] {
    int c = 0;
    if (cudaGetDeviceCount(&c) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return c;
  }();
  return n;
}

int current_device() {
  int d = 0;
  TS_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int index) {
  TS_CHECK(index >= 0 && index < device_count(), RuntimeError, "cuda.set_device: device ", index,
           " does not exist (", device_count(), " CUDA device(s) found)");
  TS_CUDA_CHECK(cudaSetDevice(index));
}

namespace {
constexpr int kMaxDevices = 64;
thread_local cudaStream_t t_streams[kMaxDevices] = {};
}  // namespace

cudaStream_t current_stream(int index) { return t_streams[index]; }
void set_current_stream(int index, cudaStream_t s) { t_streams[index] = s; }

DeviceGuard::DeviceGuard(int index) {
  const int cur = current_device();
  if (cur != index) {
    TS_CUDA_CHECK(cudaSetDevice(index));
    prev_ = cur;
  }
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

int sm_count(int index) {
  static std::once_flag once;
  static std::vector<int> counts;
  std::call_once(once, [] {
    counts.resize(device_count());
    for (int i = 0; i < device_count(); ++i)
      cudaDeviceGetAttribute(&counts[i], cudaDevAttrMultiProcessorCount, i);
  });
  return counts[index];
}

}  // namespace ts::cuda
