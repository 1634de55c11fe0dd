// Per-tensor autograd state, and the functions ops and bindings use to read and set it.
#pragma once
#include <memory>

#include "autograd/node.h"

namespace ts::autograd {

struct AutogradMeta {
  bool requires_grad = false;     // set on leaves by the user
  Tensor grad;                    // .grad
  std::shared_ptr<Node> grad_fn;  // set on op outputs
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;  // leaves: their AccumulateGrad, created on demand
  bool retains_grad = false;
  // retain_grad()'s hook, moved to the new grad_fn when an in-place op rebases the tensor's
  // history, so .grad stays the gradient w.r.t. the tensor's current value.
  std::shared_ptr<GradHook> retain_hook;
  std::vector<std::shared_ptr<GradHook>> leaf_hooks;  // hooks on a leaf's gradient
  // Leaves: called with the leaf after its .grad was updated (return value ignored).
  std::vector<std::shared_ptr<GradHook>> post_accumulate_hooks;
  // Note [Writes into views]: a view recorded by autograd remembers its root base; an in-place
  // write into it rebases the base's history (CopySlices), and every view whose base_gen lags
  // the base's history_gen re-derives its grad_fn from the base's new history on next use.
  Tensor view_base;          // defined for views made by recorded view ops
  uint64_t base_gen = 0;     // views: the base's history_gen when grad_fn was derived
  uint64_t history_gen = 0;  // bases: bumped by every in-place write into them or their views
};

AutogradMeta* get_meta(const Tensor& t);  // null when the tensor has none
AutogradMeta& ensure_meta(const Tensor& t);

bool requires_grad(const Tensor& t);  // leaf flag or has a grad_fn
bool is_leaf(const Tensor& t);
void set_requires_grad(const Tensor& t, bool value);
const std::shared_ptr<Node>& grad_fn(const Tensor& t);
// Where a gradient w.r.t. t flows: its grad_fn and output number, or its AccumulateGrad.
Edge gradient_edge(const Tensor& t);
// A new TensorImpl over the same storage and geometry, without autograd state.
Tensor detach(const Tensor& t);
void set_history(const Tensor& out, const std::shared_ptr<Node>& fn, uint32_t output_nr);

}  // namespace ts::autograd
