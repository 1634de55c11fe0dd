// PyTorch's pointwise activations (nn.functional's sigmoid, elu, hardswish, threshold, ...).
// On real floating inputs sigmoid, silu, mish, hardswish, hardsigmoid, the elu family,
// leaky_relu, hardtanh/relu6 and softplus run fused kernels (activation_fused.h, Note [Fused
// activations]); the others, and integer/complex inputs, are composed of differentiable
// elementwise ops whose formulas give their gradients of every order. Each form gives
// PyTorch's gradient at the kinks (Note [Activation kinks]). ReLU and GELU have their own
// fused kernels (activation.h).
//
// `inplace` (PyTorch's inplace=True and trailing-underscore forms): x is overwritten with the
// result and returned (Note [In-place activations]).
#pragma once
#include <optional>

#include "core/tensor.h"
#include "ops/random.h"

namespace ts::nn {

Tensor sigmoid(const Tensor& x);     // integer and bool inputs compute in the default float
Tensor logsigmoid(const Tensor& x);  // min(x, 0) - log1p(exp(-|x|))
Tensor softplus(const Tensor& x, double beta, double threshold);  // linear above threshold
Tensor softsign(const Tensor& x);                                 // x / (1 + |x|)
Tensor tanhshrink(const Tensor& x);                               // x - tanh(x)
Tensor hardshrink(const Tensor& x, double lambd);                 // x where |x| > lambd, else 0
Tensor softshrink(const Tensor& x, double lambd);  // lambd >= 0 (ValueError otherwise)
// a * sigmoid(b) for the halves a, b of dim (its size must be even: ValueError).
Tensor glu(const Tensor& x, int64_t dim);
// x where x > 0, else weight * x; weight has 1 element or one per channel (dim 1; an input of
// fewer than 2 dims has one channel), ValueError otherwise.
Tensor prelu(const Tensor& x, const Tensor& weight);
// softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input (ValueError otherwise).
Tensor softmax2d(const Tensor& x);

Tensor relu(const Tensor& x, bool inplace);
Tensor relu(const Tensor& x, bool inplace, const char* op);  // `op` names the call in errors
Tensor hardtanh(const Tensor& x, double min_val, double max_val, bool inplace);
Tensor relu6(const Tensor& x, bool inplace);
Tensor leaky_relu(const Tensor& x, double negative_slope, bool inplace);
Tensor elu(const Tensor& x, double alpha, bool inplace);
Tensor celu(const Tensor& x, double alpha, bool inplace);
Tensor selu(const Tensor& x, bool inplace);
Tensor silu(const Tensor& x, bool inplace);
Tensor mish(const Tensor& x, bool inplace);
Tensor hardsigmoid(const Tensor& x, bool inplace);
Tensor hardswish(const Tensor& x, bool inplace);
Tensor threshold(const Tensor& x, double threshold, double value, bool inplace);
// Randomized leaky ReLU: negative inputs scaled by a slope drawn U(lower, upper) per element
// from g (the default generator when null) in training, by (lower + upper) / 2 otherwise;
// 0 <= lower <= upper (ValueError otherwise).
Tensor rrelu(const Tensor& x, double lower, double upper, bool training, bool inplace,
             Generator* g);

}  // namespace ts::nn
