#include "autograd/autocast.h"

#include <unordered_map>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "ops/copy.h"

// Note [Autocast]
// PyTorch puts autocast in front of an op as a dispatch key; tessera has no dispatcher, so
// each op in the policy table (ops/autocast_policy.h) applies its policy at its own entry
// (Note [Autocast inside the ops]) through cast_args(), before autograd records anything: the
// casts are themselves recorded (astype's ToCopyBackward), so a lower-precision op saves its
// inputs in the lower dtype and gradients flow back to every input in its own dtype.
// The state is thread-local, as in PyTorch: `t_mask` has one bit per device type whose
// autocast is enabled, so the off path is a single thread-local load.
// Nesting: PyTorch's autocast wrappers exclude autocast while the op runs; a C++ op's OpScope
// does the same (suspend/resume). Ops written in Python are composites of public ops, so a
// float32-on-CUDA hook (the exp/log family, pow, sum, softmax, layer_norm, ...) reached from
// inside one would change the dtype of ops that are on no list: those hooks therefore skip
// when the calling Python frame is in one of tessera's op modules (the NestedFn set by the
// bindings). The lower-precision hooks need no such check (they are idempotent inside
// lower-precision composites), and the CPU lists match PyTorch's decompositions (which do
// autocast their insides, e.g. CPU tensordot -> mm).
// Weight cache: like PyTorch (after Apex), casts of float32 leaves that require grad to the
// autocast dtype are cached until the outermost autocast region exits, so a weight used by
// many ops (or many time steps) is cast once. The cache is per thread (the state is too) and
// keyed by the source's TensorImpl; an entry also holds the source (so the address can't be
// reused) and its version, so an in-place update of the weight inside the region misses.

namespace ts::autocast {

namespace {
struct CacheEntry {
  Tensor source;
  uint64_t version;
  Tensor cast;
};

NestedFn g_nested = nullptr;
thread_local uint8_t t_mask = 0;
thread_local DType t_dtype[kNumDeviceTypes] = {DType::BFloat16, DType::Float16};
thread_local bool t_cache_enabled = true;
thread_local int t_nesting = 0;
thread_local std::unordered_map<const TensorImpl*, CacheEntry> t_cache;

int index_of(DeviceType dev) { return static_cast<int>(dev); }

bool eligible(const Tensor& t) {
  if (!t.defined() || t.impl()->wrapped_number) return false;
  const DType d = t.dtype();
  return (d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32) &&
         (t_mask >> index_of(t.device().type)) & 1;
}

Tensor plain_cast(const Tensor& x, DType to) { return astype_op(x, to, /*copy=*/false); }

Tensor cached_cast(const Tensor& x, DType to) {
  const bool can_cache = t_cache_enabled && to == t_dtype[index_of(x.device().type)] &&
                         x.dtype() == DType::Float32 && !x.impl()->is_view &&
                         autograd::grad_enabled() && autograd::is_leaf(x) &&
                         autograd::requires_grad(x);
  if (!can_cache) return plain_cast(x, to);
  auto& c = t_cache;
  auto it = c.find(x.impl());
  if (it != c.end() && it->second.version == x.version() && it->second.cast.dtype() == to)
    return it->second.cast;
  Tensor out = plain_cast(x, to);
  c[x.impl()] = CacheEntry{x, x.version(), out};
  return out;
}
}  // namespace

namespace detail {
std::atomic<int> g_threads_enabled{0};
bool active_in_this_thread() { return t_mask != 0; }
}  // namespace detail

namespace {
// Keeps g_threads_enabled right when a thread exits with autocast still enabled.
struct ThreadExit {
  bool armed = false;
  ~ThreadExit() {
    if (armed && t_mask) detail::g_threads_enabled.fetch_sub(1, std::memory_order_relaxed);
  }
};
thread_local ThreadExit t_exit;
}  // namespace

bool is_enabled(DeviceType dev) { return (t_mask >> index_of(dev)) & 1; }
namespace {
void set_mask(uint8_t mask) {
  t_exit.armed = true;  // constructs (and arms) this thread's exit hook
  const uint8_t old = t_mask;
  t_mask = mask;
  if (!old && t_mask) detail::g_threads_enabled.fetch_add(1, std::memory_order_relaxed);
  if (old && !t_mask) detail::g_threads_enabled.fetch_sub(1, std::memory_order_relaxed);
}
}  // namespace
void set_enabled(DeviceType dev, bool enabled) {
  const uint8_t bit = static_cast<uint8_t>(1u << index_of(dev));
  set_mask(enabled ? (t_mask | bit) : (t_mask & ~bit));
}
uint8_t suspend() {
  const uint8_t old = t_mask;
  if (old) set_mask(0);
  return old;
}
void resume(uint8_t mask) { set_mask(mask); }
DType dtype(DeviceType dev) { return t_dtype[index_of(dev)]; }
void set_dtype(DeviceType dev, DType dtype) { t_dtype[index_of(dev)] = dtype; }
bool cache_enabled() { return t_cache_enabled; }
void set_cache_enabled(bool enabled) { t_cache_enabled = enabled; }
int increment_nesting() { return ++t_nesting; }
int decrement_nesting() { return --t_nesting; }
void clear_cache() { t_cache.clear(); }

void set_nested_fn(NestedFn fn) { g_nested = fn; }

void cast_args(uint8_t packed, Tensor* const* args, int n, bool from_python_hook) {
  if (!t_mask) return;
  // Float32 on CUDA only (the exp/log family, pow, sum, softmax, layer_norm, ...): skipped
  // when called from inside an op written in Python (Note [Autocast]).
  if (g_nested && policy_on(packed, DeviceType::CPU) == Policy::None &&
      policy_on(packed, DeviceType::CUDA) == Policy::Fp32) {
    bool would_cast = false;
    for (int i = 0; i < n && !would_cast; ++i)
      would_cast = eligible(*args[i]) && args[i]->device().type == DeviceType::CUDA &&
                   args[i]->dtype() != DType::Float32;
    if (!would_cast || g_nested(from_python_hook)) return;
  }
  // Promote's target: the autocast dtype unless some eligible input is wider (float32, or
  // the other 16-bit type, which promotes with it to float32).
  DType widest[kNumDeviceTypes] = {t_dtype[0], t_dtype[1]};
  for (int i = 0; i < n; ++i) {
    const Tensor& t = *args[i];
    if (!eligible(t)) continue;
    const int dev = index_of(t.device().type);
    if (policy_on(packed, t.device().type) == Policy::Promote)
      widest[dev] = promote_types(widest[dev], t.dtype());
  }
  for (int i = 0; i < n; ++i) {
    Tensor& t = *args[i];
    if (!eligible(t)) continue;
    const DeviceType dev = t.device().type;
    const Policy policy = policy_on(packed, dev);
    if (policy == Policy::None) continue;
    const DType to = policy == Policy::Lower  ? t_dtype[index_of(dev)]
                     : policy == Policy::Fp32 ? DType::Float32
                                              : widest[index_of(dev)];
    if (t.dtype() != to) t = cached_cast(t, to);
  }
}

}  // namespace ts::autocast
