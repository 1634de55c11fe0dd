// einsum: NumPy/PyTorch subscripts ('bij,bjk->bik', '...ij->...ji', implicit output), contracted
// pairwise through matmul; its gradient comes from the differentiable ops it is made of.
#pragma once
#include <string>
#include <vector>

#include "core/tensor.h"

namespace ts {

// Repeated labels within one operand become diagonal views, labels no other operand (nor the
// output) needs are summed away first, and each pairwise contraction is one batched matmul, the
// pair chosen greedily by the smallest intermediate (opt_einsum's "greedy"). Operands promote to
// a common dtype; size-1 dims broadcast. Equation/operand mismatches raise ValueError.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);

}  // namespace ts
