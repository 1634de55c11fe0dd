// Fused optimizer steps: one call updates every parameter of a param group in place (SGD,
// Adam/AdamW), so a training step costs one Python -> C++ crossing instead of a handful of
// elementwise ops per parameter. CPU kernels in cpu/optim_kernels.cpp; a CUDA backend adds
// its kernels to the same stubs.
#pragma once
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

struct SgdHyper {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

struct AdamHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false;
  bool decoupled = false;  // AdamW: p *= 1 - lr * weight_decay instead of g += wd * p
};

// One parameter's buffers for a kernel: contiguous, same shape, dtype and device.
// `buf` is undefined without momentum; `first` says the buffer is new (it takes g as is).
struct SgdSlot {
  Tensor param, grad, buf;
  bool first = false;
};
// `max_exp_avg_sq` is undefined without amsgrad; `step` is this update's (1-based) count.
// `device_step` (capturable: a float32 0-d tensor on the parameter's device, PyTorch's
// capturable=True state) is defined instead when the count lives on the device: the kernel
// reads the old count there, uses count + 1 and stores it, so a CUDA graph replays correct
// bias corrections (Note [CUDA graphs]).
struct AdamSlot {
  Tensor param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, device_step;
  double step = 1;
};

using SgdStepKernel = void (*)(const std::vector<SgdSlot>& slots, const SgdHyper& h);
using AdamStepKernel = void (*)(const std::vector<AdamSlot>& slots, const AdamHyper& h);
TS_DECLARE_STUB(SgdStepKernel, sgd_step_stub);
TS_DECLARE_STUB(AdamStepKernel, adam_step_stub);

// PyTorch's SGD update on every (param, grad) pair; momentum buffers that are missing
// (std::nullopt) are created. Returns the momentum buffers (empty without momentum).
std::vector<Tensor> sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                              const std::vector<std::optional<Tensor>>& momentum_buffers,
                              const SgdHyper& h);

// PyTorch's Adam/AdamW update. `steps` are 0-d floating tensors (PyTorch's state['step'])
// incremented in place; the bias corrections use the incremented counts. A step on the
// parameters' (non-CPU) device must be float32 and is read and bumped by the device kernel.
void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
                const AdamHyper& h);

}  // namespace ts
