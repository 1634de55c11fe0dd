// The samplers built on the Philox streams of ops/random.h (Note [Counter-based RNG]): normal
// with tensor parameters, bernoulli, poisson, binomial and PyTorch's in-place fills (random_,
// exponential_, geometric_, cauchy_, log_normal_, bernoulli_). Each draws its numbers with the
// fills of ops/random.h (one generator offset per call), so a seed gives the same values on
// every device; the transforms run as ops or host loops.
#pragma once
#include <optional>

#include "ops/random.h"

namespace ts {

// mean + std * N(0, 1) over the broadcast of mean, std and `size` (either parameter may be a
// 0-d wrapped number), in `dtype` (PyTorch: mean's dtype when mean is a tensor, else std's).
// The standard normals are randn's (standard_fill_), so the stream is randn's. A negative std
// raises ValueError. Differentiable as PyTorch (NormalBackward: zero gradients).
Tensor normal(const Tensor& mean, const Tensor& std, const Shape& size, DType dtype, Generator& g);
// 1 where U[0, 1) < p over the broadcast of p and `size` (p floating, in [0, 1]), in `dtype`.
// Differentiable as PyTorch (BernoulliBackward: zero gradient).
Tensor bernoulli(const Tensor& p, const Shape& size, DType dtype, Generator& g);
// 1 where U[0, 1) < p for a number p in [0, 1]: the uniforms in `draw` (float64 for NumPy's
// bernoulli(p, size), float32 for PyTorch's bernoulli(input, p)), the result in `dtype`.
Tensor bernoulli(double p, const Shape& shape, DType draw, DType dtype, Device device,
                 Generator& g);
// Poisson(rate) per element of a floating `rate` (>= 0), in rate's dtype; Binomial(count,
// prob) over their broadcast (count >= 0, prob in [0, 1]), in count's dtype. Drawn on the
// host (Knuth / PTRS, inversion / BTRS), so every device gets the CPU's numbers.
Tensor poisson(const Tensor& rate, Generator& g);
Tensor binomial(const Tensor& count, const Tensor& prob, Generator& g);
// Gamma(alpha, 1) per element of a floating `alpha` (> 0), in alpha's dtype: Marsaglia and
// Tsang's squeeze (alpha < 1 boosted by U^(1/alpha)), drawn on the host like poisson, results
// clamped to the dtype's smallest normal number (PyTorch's _standard_gamma). Differentiable:
// the gradient w.r.t. alpha is the reparameterized one, standard_gamma_grad.
Tensor standard_gamma(const Tensor& alpha, Generator& g);
// d x / d alpha at fixed quantile for x ~ Gamma(alpha, 1) (implicit reparameterization:
// -(dP(alpha, x)/d alpha) / density(x; alpha), P the regularized lower incomplete gamma),
// elementwise over the broadcast of alpha and x (PyTorch's _standard_gamma_grad). Not
// differentiable.
Tensor standard_gamma_grad(const Tensor& alpha, const Tensor& x);
// Exponential numbers with mean `scale` (-log1p(-u) * scale, u uniform in the default dtype
// unless `dtype`).
Tensor exponential(double scale, const Shape& shape, DType dtype, Device device, Generator& g);

// PyTorch's in-place fills; each raises for a leaf that requires grad (check_inplace).
void bernoulli_(const Tensor& x, const Tensor& p, Generator& g);  // p broadcast to x
void bernoulli_(const Tensor& x, double p, Generator& g);
// Integers uniform in [from, to); no `to`: [0, from) when from is given, else PyTorch's
// default range for x's dtype ([0, 2^(mantissa+1)] for floats, [0, max] for integers).
void random_(const Tensor& x, std::optional<int64_t> from, std::optional<int64_t> to, Generator& g);
void exponential_(const Tensor& x, double lambd, Generator& g);
void geometric_(const Tensor& x, double p, Generator& g);
void cauchy_(const Tensor& x, double median, double sigma, Generator& g);
void log_normal_(const Tensor& x, double mean, double std, Generator& g);

}  // namespace ts
