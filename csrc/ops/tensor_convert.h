// Tensor's conversions (x.to, x.cpu, x.type, x.float(), ...) as ops: a device move and a dtype
// cast, each recorded for autograd, and the conjugate transposes x.H / x.mH / x.adjoint().
#pragma once
#include <optional>

#include "core/tensor.h"
#include "ops/memory_format.h"

namespace ts {

// x on `device` (x itself when already there), differentiable: the gradient moves back to x's
// device (ToCopyBackward). `op` names the public call in the error of a build without CUDA.
Tensor to_device_op(const Tensor& x, Device device, bool non_blocking, const char* op = "to");

// PyTorch's x.to(device, dtype, non_blocking, copy, memory_format): moves first, then casts
// into the layout fmt asks (preserve_format: x's, Note in ops/memory_format.h); x itself when
// nothing changes and copy is false.
Tensor to_op(const Tensor& x, std::optional<Device> device, std::optional<DType> dtype,
             bool non_blocking, bool copy, MemoryFormat fmt = MemoryFormat::Preserve);

// x.mH / x.adjoint(): the conjugate transpose of the last two dims (a view for real x);
// x.H: the same for a matrix, x (conjugated) for a 0-d tensor. `op` names the caller.
Tensor adjoint_op(const Tensor& x, const char* op);
Tensor H_op(const Tensor& x);

}  // namespace ts
