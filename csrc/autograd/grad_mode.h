// Grad mode (thread-local): whether ops record the graph. no_grad / enable_grad /
// set_grad_enabled / inference_mode are guards over it.
#pragma once

namespace ts::autograd {

bool grad_enabled();
void set_grad_enabled(bool enabled);
bool anomaly_enabled();
void set_anomaly_enabled(bool enabled);

struct GradModeGuard {
  explicit GradModeGuard(bool enabled) : prev_(grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ts::autograd
