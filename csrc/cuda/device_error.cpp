// Note [Deferred device errors] (device_error.h): the per-device report slots and the check
// the backend runs after each synchronization with the host.
#include "cuda/device_error.h"

#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"

namespace ts::cuda {
namespace {

constexpr int kMaxDevices = 64;

struct Slots {
  std::mutex mu;
  DeviceErrorSlot* slot[kMaxDevices] = {};       // device addresses (for kernels)
  DeviceErrorSlot* host_slot[kMaxDevices] = {};  // the same memory as the host sees it
  unsigned* claim[kMaxDevices] = {};
  std::vector<std::pair<std::string, std::string>> messages;  // code - 1 -> (op, noun)
};

Slots& slots() {
  static Slots* s = new Slots;  // leaked: kernels may still report during shutdown
  return *s;
}

void ensure(int device) {
  Slots& s = slots();
  TS_CHECK(device >= 0 && device < kMaxDevices, RuntimeError, "cuda: device index ", device,
           " out of range");
  if (s.slot[device]) return;
  DeviceGuard g(device);
  void* host = nullptr;
  TS_CUDA_CHECK(cudaHostAlloc(&host, sizeof(DeviceErrorSlot), cudaHostAllocMapped));
  *static_cast<DeviceErrorSlot*>(host) = DeviceErrorSlot{};
  void* claim = nullptr;
  TS_CUDA_CHECK(cudaMalloc(&claim, sizeof(unsigned)));
  TS_CUDA_CHECK(cudaMemset(claim, 0, sizeof(unsigned)));
  void* dev = nullptr;
  TS_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  s.claim[device] = static_cast<unsigned*>(claim);
  s.host_slot[device] = static_cast<DeviceErrorSlot*>(host);
  s.slot[device] = static_cast<DeviceErrorSlot*>(dev);
}

}  // namespace

DeviceErrorSlot* device_error_slot(int device) {
  Slots& s = slots();
  std::lock_guard<std::mutex> lock(s.mu);
  ensure(device);
  return s.slot[device];
}

unsigned* device_error_claim(int device) {
  Slots& s = slots();
  std::lock_guard<std::mutex> lock(s.mu);
  ensure(device);
  return s.claim[device];
}

int32_t device_error_code(const char* op, const char* noun) {
  Slots& s = slots();
  std::lock_guard<std::mutex> lock(s.mu);
  s.messages.emplace_back(op, noun);
  return static_cast<int32_t>(s.messages.size());
}

void raise_device_error(int device) {
  Slots& s = slots();
  if (device < 0 || device >= kMaxDevices || !s.host_slot[device]) return;  // never used
  volatile DeviceErrorSlot* slot = s.host_slot[device];
  const int32_t code = slot->code;
  if (code == 0) return;
  const int64_t value = slot->value, lo = slot->lo, hi = slot->hi;
  std::string op = "cuda kernel", noun = "index";
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (code > 0 && static_cast<size_t>(code) <= s.messages.size()) {
      op = s.messages[code - 1].first;
      noun = s.messages[code - 1].second;
    }
    slot->code = 0;
    DeviceGuard g(device);
    TS_CUDA_CHECK(cudaMemset(s.claim[device], 0, sizeof(unsigned)));
  }
  TS_CHECK(false, IndexError, op, ": ", noun, " ", value, " is out of range [", lo, ", ", hi,
           ") (found by a CUDA kernel and reported at the next synchronization; results "
           "computed since then from that ",
           noun, " are not meaningful)");
}

}  // namespace ts::cuda
