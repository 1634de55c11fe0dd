// In-place ops that record one node of their own, as PyTorch's do (LerpBackward0,
// AddcmulBackward0, AddmmBackward0, ...), instead of recording their out-of-place op's nodes and
// rebasing self onto them: x.lerp_, x.addcmul_, x.addcdiv_ (ops/pointwise_composite.cpp) and
// x.addmm_, x.addmv_, x.addr_, x.baddbmm_, x.addbmm_ (ops/matmul_products.cpp). The formulas
// are in formulas_inplace.cpp.
#pragma once
#include <initializer_list>
#include <memory>

#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "core/scalar.h"

namespace ts::autograd {

// The op of the node; the inputs are always (self's old value, a, b):
//   Lerp: a = end, b = weight (a wrapped Python number: LerpBackward0, a tensor: LerpBackward1);
//   Addcmul / Addcdiv: a = tensor1, b = tensor2, scalars {value};
//   Addmm / Addmv / Addr / Baddbmm / Addbmm: the two factors of the product, scalars {beta, alpha}.
enum class InplaceGrad : uint8_t { Lerp, Addcmul, Addcdiv, Addmm, Addmv, Addr, Baddbmm, Addbmm };

// When autograd records (grad mode on, an input requires grad): checks that self may be written
// (a view of a leaf that requires grad raises, Note [Writes into views]), records the node with
// edges to the inputs' histories and saves what its formula reads (a copy of anything sharing
// self's memory, so the write does not invalidate it, as PyTorch's original_self). Null otherwise.
std::shared_ptr<Node> begin_inplace(InplaceGrad kind, const Tensor& self, const Tensor& a,
                                    const Tensor& b, std::initializer_list<Scalar> scalars,
                                    const char* op);
// After the write: self's value now comes from the node (CopySlices when self is a view).
void end_inplace(const Tensor& self, const std::shared_ptr<Node>& node);

// The whole pattern: begin_inplace, `write()` (which writes self in place) with grad mode off
// so it records nothing, end_inplace. An error in write() leaves self's history as it was.
template <class Write>
void record_inplace(InplaceGrad kind, const Tensor& self, const Tensor& a, const Tensor& b,
                    std::initializer_list<Scalar> scalars, const char* op, Write&& write) {
  const std::shared_ptr<Node> node = begin_inplace(kind, self, a, b, scalars, op);
  if (!node) {
    write();
    return;
  }
  {
    GradModeGuard off(false);
    write();
  }
  end_inplace(self, node);
}

}  // namespace ts::autograd
