#include "ops/autocast_policy.h"

#include <unordered_map>

// Note [Autocast inside the ops]
// Each op's autocast policy is one row of kOpPolicies (autocast_policy.h), following PyTorch's
// CPU and CUDA lists. An op applies it at its own entry in csrc/ops with an OpScope:
//     Tensor x = input, w = weight, b = bias;
//     const autocast::OpScope scope(TS_AUTOCAST_POLICY("linear"), x, w, b);
// which casts the eligible tensors (recorded, differentiable casts: Note [Autocast] in
// autograd/autocast.cpp) and turns autocast off until the op returns, as PyTorch's autocast
// wrappers exclude the autocast key for the call: the ops an op is made of never cast again.
// Elementwise ops look their ElementwiseDef's name up (find_policy) only while autocast is
// on. The ops written in Python (most losses, group norm, the norms of ts.linalg) call the
// same table through _C._autocast_cast("mse_loss", ...) (amp/_policy.py): the table is the
// only place a policy is written. Backward formulas (FormulaNode) run with autocast off.

namespace ts::autocast {

std::optional<uint8_t> find_policy(std::string_view op, bool explicit_dtype) {
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string_view, const OpPolicy*>();
    for (const OpPolicy& e : kOpPolicies) t->emplace(e.op, &e);
    return t;
  }();
  const auto it = table->find(op);
  if (it == table->end()) return std::nullopt;
  const OpPolicy& e = *it->second;
  return pack(e.cpu, explicit_dtype && e.opt_dtype ? Policy::None : e.cuda);
}

void OpScope::enter(uint8_t packed, Tensor* const* args, int n) {
  cast_args(packed, args, n);  // undefined tensors are skipped
  saved_ = suspend();
}

}  // namespace ts::autocast
