#include "autograd/meta.h"

#include "autograd/view_writes.h"

namespace ts::autograd {

AutogradMeta* get_meta(const Tensor& t) { return t.impl()->autograd.get(); }

AutogradMeta& ensure_meta(const Tensor& t) {
  auto& m = t.impl()->autograd;
  if (!m) m = std::make_shared<AutogradMeta>();
  return *m;
}

namespace {
// A view's history follows its base's (Note [Writes into views]): bring it up to date first.
AutogradMeta* current_meta(const Tensor& t) {
  AutogradMeta* m = get_meta(t);
  if (m && m->view_base.defined()) refresh_view_history(t, *m);
  return m;
}
}  // namespace

bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = current_meta(t);
  return m && (m->requires_grad || m->grad_fn);
}

bool is_leaf(const Tensor& t) {
  const AutogradMeta* m = current_meta(t);
  return !m || !m->grad_fn;
}

void set_requires_grad(const Tensor& t, bool value) {
  if (!is_leaf(t))
    throw RuntimeError(
        "requires_grad: you can only change requires_grad flags of leaf variables. Hint: use "
        "x.detach() to get a leaf that shares memory with this non-leaf tensor");
  if (value && !is_inexact(t.dtype()))
    throw RuntimeError(str("requires_grad: Only Tensors of floating point and complex dtype can ",
                           "require gradients (got ", dtype_name(t.dtype()), ")"));
  if (!value && !get_meta(t)) return;
  ensure_meta(t).requires_grad = value;
}

const std::shared_ptr<Node>& grad_fn(const Tensor& t) {
  static const std::shared_ptr<Node> none;
  AutogradMeta* m = current_meta(t);
  return m ? m->grad_fn : none;
}

Edge gradient_edge(const Tensor& t) {
  AutogradMeta* m = current_meta(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (!m->requires_grad) return {};
  std::shared_ptr<Node> acc = m->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    m->grad_accumulator = acc;
  }
  return {acc, 0};
}

Tensor detach(const Tensor& t) {
  Tensor d = t.as_strided(t.shape(), t.strides(), t.offset());
  // Like PyTorch's non-differentiable views: a write into d gives d a history, never t.
  d.impl()->is_view = false;
  d.impl()->wrapped_number = t.is_wrapped_number();
  return d;
}

void set_history(const Tensor& out, const std::shared_ptr<Node>& fn, uint32_t output_nr) {
  AutogradMeta& m = ensure_meta(out);
  if (m.retain_hook && m.grad_fn != fn) {
    auto& old = m.grad_fn->retain_hooks;
    for (auto it = old.begin(); it != old.end(); ++it)
      if (it->second == m.retain_hook) {
        old.erase(it);
        break;
      }
    if (fn) fn->retain_hooks.emplace_back(output_nr, m.retain_hook);
  }
  m.grad_fn = fn;
  m.output_nr = output_nr;
  m.requires_grad = false;
}

}  // namespace ts::autograd
