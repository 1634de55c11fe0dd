// Recording ops: a FormulaNode runs one entry of the backward-formula table
// (autograd/formulas.cpp) and then the one generic step every gradient goes through
// (Note [Sum back to input shape]).
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "autograd/grad_mode.h"
#include "autograd/meta.h"
#include "autograd/node.h"

namespace ts::autograd {

struct FormulaNode;

// What a backward formula sees.
struct BackwardCtx {
  const FormulaNode& node;
  Tensor saved(size_t i) const;            // unpacked (version-checked) saved tensor i
  bool needs(size_t i) const;              // whether forward input i needs a gradient
  const InputMeta& input(size_t i) const;  // shape/dtype/device of forward input i
  int64_t attr(size_t i) const;            // integer attributes (axes, flags, ...)
  const Shape& attrs() const;
  double scalar(size_t i) const;  // float attributes (exponents, bounds, ...)
};

using BackwardFn = variable_list (*)(const BackwardCtx& ctx, const variable_list& grads);

struct Formula {
  const char* name;  // node name shown as grad_fn, e.g. "MulBackward"
  BackwardFn fn;
  // Multi-output ops whose formula needs to know which outputs got no gradient (e.g. svd
  // skips the singular-vector terms): undefined gradients are passed as they are, not zeros.
  bool pass_undefined = false;
};

struct FormulaNode : Node {
  const Formula* formula = nullptr;
  std::vector<SavedTensor> saved;
  std::vector<InputMeta> inputs;
  Shape attrs;
  std::vector<double> scalars;

  // PyTorch numbers its generated node classes (MulBackward0, but CopySlices): name() matches.
  std::string name() const override;
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;

  void save(const Tensor& t, bool is_output = false) { saved.emplace_back(t, is_output); }
};

// True when grad mode is on and any input requires grad (the cheap check ops make first).
inline bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t->defined() && t->impl()->autograd && requires_grad(*t)) return true;
  return false;
}
bool needs_grad(const std::vector<Tensor>& inputs);

// Creates the node for `formula` with edges to `inputs`' histories and makes it the grad_fn
// of every inexact output (integer/bool outputs are not differentiable).
std::shared_ptr<FormulaNode> record(const Formula& formula, const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& outputs);

// Note [Sum back to input shape]: formulas return gradients in the broadcast shape and the
// compute dtype; this sums broadcast dims away and casts to the input's dtype (a complex
// gradient for a real input keeps its real part, like PyTorch).
Tensor sum_to(const Tensor& grad, const Shape& shape);
Tensor reduce_grad_to_input(const Tensor& grad, const InputMeta& meta);

}  // namespace ts::autograd
