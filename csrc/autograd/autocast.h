// Autocast (mixed precision, PyTorch's torch.autocast): a thread-local state per device type
// (enabled + the lower-precision dtype), a nesting depth and a per-thread cast cache. Ops on
// the policy table (ops/autocast_policy.h) call cast_args() first; it returns at once (one
// thread-local load) unless autocast is on for some device type in this thread
// (Note [Autocast]).
#pragma once
#include <atomic>
#include <cstdint>

#include "core/device.h"
#include "core/tensor.h"

namespace ts::autocast {

// PyTorch's CastPolicy: Lower casts floating inputs to the autocast dtype, Fp32 to float32,
// Promote to the widest floating input type (float32 if any input is float32).
enum class Policy : uint8_t { None = 0, Lower = 1, Fp32 = 2, Promote = 3 };

// An op's policy per device type, packed in a byte (the lists differ between CPU and CUDA):
// bits 0-1 the CPU policy, bits 2-3 the CUDA policy.
constexpr uint8_t pack(Policy cpu, Policy cuda) {
  return static_cast<uint8_t>(static_cast<uint8_t>(cpu) | (static_cast<uint8_t>(cuda) << 2));
}
constexpr Policy policy_on(uint8_t packed, DeviceType dev) {
  return static_cast<Policy>((packed >> (2 * static_cast<int>(dev))) & 3);
}

namespace detail {
// Threads whose autocast is enabled for some device type: while none is, active() is one
// relaxed load of a global (no thread-local access, which in a shared library is a call).
extern std::atomic<int> g_threads_enabled;
bool active_in_this_thread();
}  // namespace detail

// The one cheap check: autocast is enabled for some device type in this thread.
inline bool active() {
  return detail::g_threads_enabled.load(std::memory_order_relaxed) != 0 &&
         detail::active_in_this_thread();
}
bool is_enabled(DeviceType dev);
void set_enabled(DeviceType dev, bool enabled);
DType dtype(DeviceType dev);  // float16 for CUDA, bfloat16 for CPU unless set
void set_dtype(DeviceType dev, DType dtype);
bool cache_enabled();
void set_cache_enabled(bool enabled);
int increment_nesting();
int decrement_nesting();
void clear_cache();  // drops this thread's cached casts

// Set by the Python layer (bind_autocast.cpp): whether the op being entered was called from
// inside another op's implementation, judged from the calling Python frame (one frame further
// up for `from_python_hook`, the entry hook of an op written in Python). The float32-on-CUDA
// hooks skip then, as PyTorch runs an op's insides with autocast excluded (Note [Autocast]).
using NestedFn = bool (*)(bool from_python_hook);
void set_nested_fn(NestedFn fn);

// Applies `packed`'s policy to each defined tensor in args[0..n) in place (differentiable
// casts). Only floating, non-float64, non-Python-scalar tensors on a device type whose
// autocast is enabled are cast. A no-op unless active().
void cast_args(uint8_t packed, Tensor* const* args, int n, bool from_python_hook = false);

// Turns autocast off in this thread for every device type and returns the previous mask
// (0 when it was off); resume(mask) restores it. OpScope (ops/autocast_policy.h) and the
// backward formulas (FormulaNode) use them.
uint8_t suspend();
void resume(uint8_t mask);

// RAII form of suspend/resume.
class Suspended {
 public:
  Suspended() : saved_(active() ? suspend() : 0) {}
  ~Suspended() {
    if (saved_) resume(saved_);
  }
  Suspended(const Suspended&) = delete;
  Suspended& operator=(const Suspended&) = delete;

 private:
  uint8_t saved_;
};

}  // namespace ts::autocast
