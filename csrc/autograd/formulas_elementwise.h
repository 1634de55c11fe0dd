// What record_elementwise (formulas.cpp) needs from the formula tables split by family.
#pragma once
#include <string_view>

#include "autograd/function.h"

namespace ts::autograd {

// Which of (a, b, out) an elementwise formula reads; they are saved in that order.
constexpr int kSaveA = 1, kSaveB = 2, kSaveOut = 4;
struct ElementwiseFormula {
  Formula formula;
  int save;
};
// The special functions' formulas (formulas_special.cpp), or nullptr for another op. An entry
// whose formula.fn is null marks an op that is not differentiable: no node is recorded and
// the output does not require grad (torch's non_differentiable).
const ElementwiseFormula* special_formula(std::string_view op);

}  // namespace ts::autograd
