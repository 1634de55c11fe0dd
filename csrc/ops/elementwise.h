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
  // floor_divide / remainder: in an integer compute dtype a zero in operand 1 (the divisor)
  // raises PyTorch's ZeroDivisionError (a RuntimeError) on the CPU (check_integer_divisor).
  bool checks_int_divisor = false;
};

// The promoted dtype of two operands; wrapped Python scalars are weak.
DType result_type(const Tensor& a, const Tensor& b);
// `op` (default: def.name) names the op in errors: an in-place method passes its own name.
DType compute_dtype(const ElementwiseDef& def, DType promoted, DType a, DType b,
                    const char* op = nullptr);
DType output_dtype(const ElementwiseDef& def, DType compute);

// An uninitialized output of an elementwise op over `inputs` (broadcasting to `shape`), laid out
// as PyTorch's TensorIterator lays it out (Note [Output strides]).
Tensor empty_elementwise(const Shape& shape, DType dtype, Device device,
                         std::initializer_list<const Tensor*> inputs);

Tensor unary_op(const ElementwiseDef& def, const Tensor& x, const char* op = nullptr);
Tensor binary_op(const ElementwiseDef& def, const Tensor& a, const Tensor& b,
                 const char* op = nullptr);
// a = op(a) / a = a op b, written into a (respecting views); the result must keep a's shape
// and be castable to a's dtype (PyTorch's rule), else TypeError/ValueError. `op` (default:
// def.name) names the in-place method in errors (Note [In-place without a temporary]).
void unary_op_(const ElementwiseDef& def, const Tensor& a, const char* op = nullptr);
void binary_op_(const ElementwiseDef& def, const Tensor& a, const Tensor& b,
                const char* op = nullptr);
// a = r for an in-place op (`op` names it in errors): r must have a's shape and cast safely to
// a's dtype (r on another device is moved); a takes r's autograd history (PyTorch's in-place
// rules) before the copy, or, when a requires grad and r does not, the write is recorded as
// x[...] = r (the overwritten values get no gradient).
// An expanded a (check_no_internal_overlap) raises, unless expanded_ok (index_put_, masked_fill_,
// index_fill_: PyTorch warns, warn_expanded_write, and writes).
void assign_inplace_result(const char* op, const Tensor& a, const Tensor& r,
                           bool expanded_ok = false);
// a = r where r does not depend on a's values (fill_, copy_; r has a's shape and dtype and is
// on its device): recorded as a[...] = r when autograd records, so r gets the gradient and the
// overwritten values get zeros.
void overwrite_inplace(const char* op, const Tensor& a, const Tensor& r);
// What an in-place method whose op is composed of several ops reads before its result is
// written into a (assign_inplace_result): a itself, or a copy of a when autograd records (so no
// tensor saved for the backward of an inner op is a's memory, overwritten by the write).
Tensor inplace_source(const Tensor& a, std::initializer_list<const Tensor*> others = {});
// out= of PyTorch's functions (elementwise ones included) is ops/out_arg.h's write_out: out
// resized to the result's shape (resize_output), a dtype the result casts to, no overlap with
// the inputs, nothing recorded through it.

void check_same_device(const char* op, const Tensor& a, const Tensor& b);
// PyTorch's ZeroDivisionError (tessera.errors.ZeroDivisionError, also a RuntimeError) naming
// `op` when the integer divisor b holds a zero; a device b is not read back (it would
// synchronize: the CUDA kernels give 0 there).
void check_integer_divisor(const Tensor& b, const char* op);

}  // namespace ts
