// Operand dtype checks: operand_dtype.h.
#include "ops/nn/operand_dtype.h"

#include "core/error.h"

namespace ts::nn {

void check_same_dtype(const char* op, const char* x_name, const Tensor& x,
                      std::initializer_list<std::pair<const char*, const Tensor*>> others) {
  for (const auto& [name, t] : others)
    TS_CHECK(!t->defined() || t->dtype() == x.dtype(), TypeError, op, ": ", x_name, " (",
             dtype_name(x.dtype()), ") and ", name, " (", dtype_name(t->dtype()),
             ") must have the same dtype (PyTorch does not promote here); cast one with "
             ".to(dtype), or use autocast");
}

bool check_norm_param_dtypes(const char* op, const Tensor& x, const Tensor& weight,
                             const Tensor& bias, const char* weight_name, const char* bias_name) {
  const bool half = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  const bool mixed = half && (weight.defined() || bias.defined()) &&
                     (!weight.defined() || weight.dtype() == DType::Float32) &&
                     (!bias.defined() || bias.dtype() == DType::Float32);
  if (mixed) return true;
  for (const auto& [name, t] :
       {std::pair<const char*, const Tensor*>{weight_name, &weight}, {bias_name, &bias}})
    TS_CHECK(!t->defined() || t->dtype() == x.dtype(), TypeError, op, ": ", name, " dtype ",
             dtype_name(t->dtype()), " differs from input dtype ", dtype_name(x.dtype()),
             " (PyTorch does not promote here; a float16/bfloat16 input may have float32 ",
             weight_name, " and ", bias_name, "); cast them with .to(dtype), or use autocast");
  return false;
}

}  // namespace ts::nn
