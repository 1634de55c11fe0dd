// Deferred device errors: how CUDA kernels report bad input (an index out of range, a class
// target outside [0, C)) without a host round trip before every launch.
//
// Note [Deferred device errors]
// Checking index tensors on the host costs a device-to-host copy and a stream synchronization
// per op, which serializes the host with the GPU (PyTorch avoids it with device-side asserts,
// which poison the CUDA context for the rest of the process). Here a kernel that meets a bad
// value clamps it (so it never reads or writes out of bounds) and records the first report in
// a per-device slot of mapped pinned host memory. The host looks at the slot whenever it has
// synchronized with the device anyway (synchronize(), a blocking copy to the host such as
// item() or numpy(), stream/event synchronize) and raises IndexError naming the op, the value
// and the valid range. The error is therefore raised at the next synchronization instead of at
// the faulty op; outputs computed from clamped indices in between are wrong but the process
// and the device stay usable.
#pragma once
#include <cstdint>

namespace ts::cuda {

struct DeviceErrorSlot {
  int32_t code;  // 0: nothing reported; else the registered message (device_error_code)
  int32_t pad;
  int64_t value, lo, hi;  // the bad value and the valid range [lo, hi)
};

// Kernels receive this pointer (valid on the device: mapped pinned memory) and the code.
DeviceErrorSlot* device_error_slot(int device);
// The code of an (op, noun) pair, e.g. ("embedding", "index"); registered once, cached by
// the caller in a function-local static.
int32_t device_error_code(const char* op, const char* noun);
// Called after the host synchronized with `device`: raises IndexError when a kernel reported
// (and clears the report so the device is usable again).
void raise_device_error(int device);

#ifdef __CUDACC__
// Records the first report; later ones (and concurrent ones losing the claim) are dropped.
__device__ inline void report_device_error(DeviceErrorSlot* slot, unsigned* claim, int32_t code,
                                           int64_t value, int64_t lo, int64_t hi) {
  if (atomicCAS(claim, 0u, 1u) != 0u) return;
  slot->value = value;
  slot->lo = lo;
  slot->hi = hi;
  __threadfence_system();
  *reinterpret_cast<volatile int32_t*>(&slot->code) = code;
}
#endif

// The device-memory claim word that goes with a device's slot.
unsigned* device_error_claim(int device);

}  // namespace ts::cuda
