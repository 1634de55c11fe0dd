#include "autograd/grad_mode.h"

#include <atomic>

namespace ts::autograd {

namespace {
thread_local bool t_grad_enabled = true;
std::atomic<bool> g_anomaly{false};  // process-wide, like torch.autograd.set_detect_anomaly
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }
bool anomaly_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void set_anomaly_enabled(bool enabled) { g_anomaly.store(enabled); }

}  // namespace ts::autograd
