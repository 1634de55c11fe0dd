// PyTorch's pointwise functions that are not elementwise kernels of their own: frexp,
// float_power, torch.complex / polar, torch.equal and Tensor.square's bool rule. One definition
// each (issue 17); their gradients come from the differentiable ops they are made of.
#pragma once
#include <utility>

#include "core/tensor.h"

namespace ts {

// (mantissa, int32 exponent) with x == mantissa * 2**exponent and |mantissa| in [0.5, 1) (0
// for 0; inf/NaN kept with exponent 0). The mantissa is x scaled by an exact power of two, so
// its gradient is grad / 2**exponent (PyTorch's).
std::pair<Tensor, Tensor> frexp(const Tensor& x);

// x ** y computed in float64 (complex128 when either operand is complex), as torch.float_power.
Tensor float_power(const Tensor& x, const Tensor& y);

// real + 1j * imag from two float32 or float64 tensors of the same dtype (broadcast); an
// infinite part stays in its own component (no 0 * inf). polar: abs * (cos + 1j sin)(angle).
Tensor complex(const Tensor& real, const Tensor& imag);
Tensor polar(const Tensor& abs, const Tensor& angle);

// torch.equal: the same shape and equal values everywhere (NaN != NaN).
bool tensor_equal(const Tensor& a, const Tensor& b);

// Tensor.square: x * x, with bool input computed as int64 (torch's pow(x, 2)).
Tensor square_torch(const Tensor& x);

}  // namespace ts
