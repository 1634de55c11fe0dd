// The elementwise op framework: validate, promote, broadcast, allocate, dispatch.
// Each op is an ElementwiseDef (a name, a kernel stub, the dtypes it computes in and how its
// output dtype follows); the CPU/CUDA kernels live in csrc/cpu and csrc/cuda.
#pragma once
#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "iter/tensor_iter.h"

namespace ts {

// Operands are already in the compute dtype; output 0 is in the op's output dtype.
using ElementwiseKernel = void (*)(const ElementwiseIter&, DType compute);

enum class InRule : uint8_t {
  Promote,     // compute in the promoted dtype
  IntToFloat,  // like Promote, but integers and bool compute in the default float dtype
};
enum class OutRule : uint8_t {
  Same,  // output dtype = compute dtype
  Bool,  // comparisons, isnan, logical_*
  Real,  // abs/real/imag of complex give the real dtype
};

struct ElementwiseDef {
  const char* name;
  KernelStub<ElementwiseKernel>* stub;
  uint32_t allowed;  // DTypeSet of compute dtypes
  InRule in;
  OutRule out;
  const char* allowed_desc;  // for errors: "numeric", "integer or boolean", ...
};

// The promoted dtype of two operands; wrapped Python scalars are weak.
DType result_type(const Tensor& a, const Tensor& b);
DType compute_dtype(const ElementwiseDef& def, DType promoted, DType a, DType b);
DType output_dtype(const ElementwiseDef& def, DType compute);

Tensor unary_op(const ElementwiseDef& def, const Tensor& x);
Tensor binary_op(const ElementwiseDef& def, const Tensor& a, const Tensor& b);
// a = a op b, written into a (respecting views); the result must keep a's shape and be
// castable to a's dtype (PyTorch's rule), else TypeError/ValueError.
void binary_op_(const ElementwiseDef& def, const Tensor& a, const Tensor& b);
// a = r for an in-place op (`op` names it in errors): r must have a's shape and cast safely to
// a's dtype; a takes r's autograd history (PyTorch's in-place rules) before the copy.
void assign_inplace_result(const char* op, const Tensor& a, const Tensor& r);
// out= of PyTorch's functions: r written into `out`, which must have r's shape and a dtype r
// casts to (PyTorch's in-place rule); nothing records through out= (RuntimeError, as PyTorch).
void write_out(const char* op, const Tensor& out, const Tensor& r);

void check_same_device(const char* op, const Tensor& a, const Tensor& b);

}  // namespace ts
