#include "autograd/function.h"

#include "autograd/autocast.h"
#include "autograd/view_writes.h"
#include "ops/copy.h"
#include "ops/math.h"
#include "ops/reduce.h"
#include "ops/views.h"

namespace ts::autograd {

Tensor BackwardCtx::saved(size_t i) const {
  return node.saved.at(i).unpack(node.formula->name,
                                 std::const_pointer_cast<Node>(node.shared_from_this()));
}
bool BackwardCtx::needs(size_t i) const {
  return i < node.next_edges.size() && node.next_edges[i].valid();
}
const InputMeta& BackwardCtx::input(size_t i) const { return node.inputs.at(i); }
int64_t BackwardCtx::attr(size_t i) const { return node.attrs[static_cast<int64_t>(i)]; }
const Shape& BackwardCtx::attrs() const { return node.attrs; }
double BackwardCtx::scalar(size_t i) const { return node.scalars.at(i); }

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.impl()->autograd && requires_grad(t)) return true;
  return false;
}

std::shared_ptr<FormulaNode> record(const Formula& formula, const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& outputs) {
  auto node = std::make_shared<FormulaNode>();
  node->formula = &formula;
  node->next_edges.reserve(inputs.size());
  node->inputs.reserve(inputs.size());
  for (const Tensor& t : inputs) {
    node->next_edges.push_back(t.defined() ? gradient_edge(t) : Edge{});
    if (t.defined())
      node->inputs.push_back({t.shape(), t.dtype(), t.device()});
    else
      node->inputs.push_back({});
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = outputs[i];
    node->out_meta.push_back({o.shape(), o.dtype(), o.device()});
    if (!is_inexact(o.dtype())) continue;
    set_history(o, node, static_cast<uint32_t>(i));
    // A view of the first input (Note [Writes into views]).
    if (o.impl()->is_view && !inputs.empty() && inputs[0].defined() &&
        inputs[0].storage() == o.storage() && requires_grad(inputs[0]))
      track_view(o, inputs[0]);
  }
  return node;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  if (grad.ndim() < shape.size()) return reshape(grad, shape);  // value with extra leading 1s
  const int64_t lead = grad.ndim() - shape.size();
  Shape axes;
  for (int64_t d = 0; d < grad.ndim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && grad.dim(d) != 1)) axes.push_back(d);
  Tensor r = axes.empty() ? grad : sum(grad, Axes(axes), /*keepdims=*/true, std::nullopt);
  return reshape(r, shape);
}

Tensor reduce_grad_to_input(const Tensor& grad, const InputMeta& meta) {
  Tensor g = sum_to(grad, meta.shape);
  if (g.dtype() != meta.dtype) {
    if (is_complex(g.dtype()) && !is_complex(meta.dtype)) g = real(g);
    g = astype_op(g, meta.dtype, /*copy=*/false);  // recorded: create_graph sees the cast
  }
  return g;
}

variable_list FormulaNode::apply(variable_list&& grads) {
  // The formulas run with autocast off (Note [Autocast inside the ops]): the gradients come in
  // the dtypes the forward's casts gave, and the formulas' own ops must not cast them again.
  const autocast::Suspended no_autocast;
  // Multi-output ops may get gradients for only some outputs: the rest are zeros.
  for (size_t i = 0; i < out_meta.size() && i < grads.size() && !formula->pass_undefined; ++i)
    if (!grads[i].defined()) {
      grads[i] = Tensor::empty(out_meta[i].shape, out_meta[i].dtype, out_meta[i].device);
      fill_(grads[i], Scalar::from_int(0));
    }
  BackwardCtx ctx{*this};
  variable_list out = formula->fn(ctx, grads);
  out.resize(next_edges.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!next_edges[i].valid() || !out[i].defined()) {
      out[i] = Tensor();
      continue;
    }
    out[i] = reduce_grad_to_input(out[i], inputs[i]);
  }
  return out;
}

std::string FormulaNode::name() const {
  const std::string n = formula->name;
  const std::string suffix = "Backward";
  const bool numbered =
      n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  return numbered ? n + "0" : n;
}

void FormulaNode::release_variables() {
  for (SavedTensor& s : saved) s.reset();
}

}  // namespace ts::autograd
