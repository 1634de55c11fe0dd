#include "ops/optim_step.h"

#include <cmath>

#include "core/error.h"
#include "core/scalar.h"
#include "ops/copy.h"
#include "ops/memory_format.h"

namespace ts {

TS_DEFINE_STUB(SgdStepKernel, sgd_step_stub, "sgd_step");
TS_DEFINE_STUB(AdamStepKernel, adam_step_stub, "adam_step");

namespace {

// Note [Optimizer layouts]: the step kernels walk flat arrays, so the tensors of one slot
// (parameter, gradient, state) must share one dense layout: the parameter's own strides when
// they are non-overlapping and dense (contiguous, or channels-last: a channels-last model
// steps with no copies, its gradients having its strides by Note [Gradient layout contract]
// and its state being made like it), else contiguous. A tensor the step writes that is laid
// out otherwise is updated through a copy in the slot's layout, written back afterwards.
struct Staged {
  Tensor target, work;
  void write_back() const {
    if (work.impl() != target.impl()) copy_(target, work);
    target.bump_version();
  }
};

// t (of p's shape) as the kernels read it in p's slot.
Staged stage(const Tensor& t, const Tensor& p) { return {t, copy_in_layout_of(t, p, false)}; }

void check_lengths(size_t n, size_t m, const char* what, const char* op) {
  TS_CHECK(n == m, ValueError, op, ": got ", n, " parameters but ", m, " ", what);
}

// `t` must match the parameter's shape, device and (for state) dtype.
void check_like(const Tensor& p, const Tensor& t, size_t i, const char* what, const char* op,
                bool same_dtype) {
  TS_CHECK(t.defined(), ValueError, op, ": ", what, "[", i, "] is missing");
  TS_CHECK(t.shape() == p.shape(), ValueError, op, ": ", what, "[", i, "] has shape ",
           shape_str(t.shape()), " but its parameter has shape ", shape_str(p.shape()));
  TS_CHECK(t.device() == p.device(), ValueError, op, ": ", what, "[", i, "] is on ",
           t.device().str(), " but its parameter is on ", p.device().str());
  TS_CHECK(!same_dtype || t.dtype() == p.dtype(), TypeError, op, ": ", what, "[", i, "] has dtype ",
           dtype_name(t.dtype()), " but its parameter has dtype ", dtype_name(p.dtype()));
}

void check_param(const Tensor& p, size_t i, const char* op) {
  TS_CHECK(is_floating(p.dtype()), TypeError, op, ": params[", i,
           "] must be floating-point (float16, bfloat16, float32, float64), got ",
           dtype_name(p.dtype()));
  TS_CHECK(!p.storage()->readonly, ValueError, op, ": params[", i, "] is read-only");
}

// The gradient as the kernel reads it: in the slot's layout and the parameter's dtype.
Tensor grad_operand(const Tensor& p, const Tensor& g) {
  return copy_in_layout_of(g.dtype() == p.dtype() ? g : astype(g, p.dtype(), true), p, false);
}

}  // namespace

std::vector<Tensor> sgd_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                              const std::vector<std::optional<Tensor>>& momentum_buffers,
                              const SgdHyper& h) {
  const char* op = "sgd_step";
  const size_t n = params.size();
  const bool use_momentum = h.momentum != 0;
  check_lengths(n, grads.size(), "gradients", op);
  if (use_momentum) check_lengths(n, momentum_buffers.size(), "momentum buffers", op);
  std::vector<SgdSlot> slots(n);
  std::vector<Staged> staged;
  std::vector<Tensor> buffers;
  for (size_t i = 0; i < n; ++i) {
    check_param(params[i], i, op);
    check_like(params[i], grads[i], i, "grads", op, false);
    staged.push_back(stage(params[i], params[i]));
    slots[i].param = staged.back().work;
    slots[i].grad = grad_operand(params[i], grads[i]);
    if (!use_momentum) continue;
    const auto& b = momentum_buffers[i];
    slots[i].first = !b.has_value();
    // A new buffer takes the parameter's layout (PyTorch's is a clone of the gradient).
    Tensor buf = b ? *b : empty_in_layout_of(params[i]);
    if (b) check_like(params[i], buf, i, "momentum_buffers", op, true);
    buffers.push_back(buf);
    staged.push_back(stage(buf, params[i]));
    slots[i].buf = staged.back().work;
  }
  if (n > 0) sgd_step_stub.get(params[0].device())(slots, h);
  for (const auto& s : staged) s.write_back();
  return buffers;
}

void adam_step_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
                const AdamHyper& h) {
  const char* op = h.decoupled ? "adamw_step" : "adam_step";
  const size_t n = params.size();
  check_lengths(n, grads.size(), "gradients", op);
  check_lengths(n, exp_avgs.size(), "exp_avg tensors", op);
  check_lengths(n, exp_avg_sqs.size(), "exp_avg_sq tensors", op);
  check_lengths(n, steps.size(), "step counts", op);
  if (h.amsgrad) check_lengths(n, max_exp_avg_sqs.size(), "max_exp_avg_sq tensors", op);
  std::vector<AdamSlot> slots(n);
  std::vector<Staged> staged;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& p = params[i];
    check_param(p, i, op);
    check_like(p, grads[i], i, "grads", op, false);
    check_like(p, exp_avgs[i], i, "exp_avgs", op, true);
    check_like(p, exp_avg_sqs[i], i, "exp_avg_sqs", op, true);
    if (h.amsgrad) check_like(p, max_exp_avg_sqs[i], i, "max_exp_avg_sqs", op, true);
    const Tensor& st = steps[i];
    const bool on_device = st.defined() && !st.device().is_cpu();
    TS_CHECK(st.defined() && st.numel() == 1 && is_floating(st.dtype()) &&
                 (!on_device || (st.device() == p.device() && st.dtype() == DType::Float32 &&
                                 st.is_contiguous())),
             TypeError, op, ": steps[", i, "] must be a one-element floating CPU tensor, or a "
             "float32 one on the parameter's device (capturable=True), got ",
             dtype_name(st.dtype()), " on ", st.device().str());
    if (on_device) slots[i].device_step = st;
    slots[i].grad = grad_operand(p, grads[i]);
    auto add = [&](const Tensor& t) {
      staged.push_back(stage(t, p));
      return staged.back().work;
    };
    slots[i].param = add(p);
    slots[i].exp_avg = add(exp_avgs[i]);
    slots[i].exp_avg_sq = add(exp_avg_sqs[i]);
    if (h.amsgrad) slots[i].max_exp_avg_sq = add(max_exp_avg_sqs[i]);
  }
  // Counts are bumped only once every input has passed its checks, so a rejected call
  // leaves the optimizer state as it was.
  for (size_t i = 0; i < n; ++i) {
    if (slots[i].device_step.defined()) {
      steps[i].bump_version();  // the kernel bumps the count on the device
      continue;
    }
    slots[i].step = item(steps[i]).to<double>() + 1;
    fill_(steps[i], Scalar::from_double(slots[i].step));
  }
  if (n > 0) adam_step_stub.get(params[0].device())(slots, h);
  for (const auto& s : staged) s.write_back();
}

}  // namespace ts
