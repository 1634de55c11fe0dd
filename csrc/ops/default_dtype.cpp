#include "ops/default_dtype.h"

#include <atomic>

namespace ts {

namespace {
std::atomic<DType> g_default_float{DType::Float32};
}  // namespace

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }
void set_default_float_dtype(DType d) { g_default_float.store(d, std::memory_order_relaxed); }

}  // namespace ts
