// The pointwise activations as single kernels (sigmoid, silu, mish, hardswish, hardsigmoid,
// the elu family, leaky_relu, hardtanh, softplus): one forward and one backward kernel stub
// for all of them, the scalar formulas in kernels/activation_math.h (Note [Fused
// activations]). Real floating inputs only; the callers (activation_pointwise.cpp) keep the
// composite forms for integer and complex inputs.
#pragma once
#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "kernels/activation_math.h"

namespace ts {

using ActivationKernel = void (*)(const Tensor& x, const Tensor& out, const act::ActParams& p);
// gx = gy * f'(x); x and gy contiguous, of one shape and dtype.
using ActivationBackwardKernel = void (*)(const Tensor& x, const Tensor& gy, const Tensor& gx,
                                          const act::ActParams& p);
TS_DECLARE_STUB(ActivationKernel, activation_stub);
TS_DECLARE_STUB(ActivationBackwardKernel, activation_backward_stub);

namespace nn {
// f(x) for a real floating x, recorded (its backward the fused backward kernel; under
// create_graph, f' written with ops so higher derivatives exist).
Tensor fused_activation(const Tensor& x, const act::ActParams& p);
// gy * f'(x), not recorded (sigmoid: x is its output y).
Tensor fused_activation_backward(const Tensor& x, const Tensor& gy, const act::ActParams& p);
}  // namespace nn

}  // namespace ts
