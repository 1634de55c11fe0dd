// Per-thread CUDA state: the current device's current stream, device guards, and the cuBLAS
// handles (one per device and thread, bound to the current stream at each use).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "core/device.h"

namespace ts::cuda {

int device_count();
int current_device();
void set_device(int index);
// The calling thread's current stream on `index` (the legacy default stream unless set).
cudaStream_t current_stream(int index);
void set_current_stream(int index, cudaStream_t s);
inline cudaStream_t current_stream(Device d) { return current_stream(d.index); }

// Makes `d` the current device for a scope and restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int index);
  explicit DeviceGuard(Device d) : DeviceGuard(static_cast<int>(d.index)) {}
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int prev_ = -1;
};

// Streaming multiprocessor count of a device (cached): sizes grids.
int sm_count(int index);

// The architectures nvcc compiled the kernels for, as 800 for sm_80 (arch_list.cu).
std::vector<int> compiled_arch_list();

}  // namespace ts::cuda
