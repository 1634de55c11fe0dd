// PyTorch's legacy norms and statistics utilities, composed of differentiable ops (issue 17:
// one definition each): torch.norm / dist / renorm, Tensor.sum_to_size, torch.histogram,
// torch.combinations and torch.gradient.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "ops/reduce.h"

namespace ts {

// torch.norm's order: a number (inf included) or "fro" / "nuc" (name non-empty).
struct NormOrd {
  Scalar p = Scalar::from_int(2);
  std::string name;
};

// torch.norm: the p-norm of the elements over `dims` (all when empty or nullopt; a 0-d x takes
// dim 0 / -1), 'fro' (the 2-norm of the elements) or 'nuc' (the nuclear norm of the matrices in
// two dims, default (0, 1)); x cast to `dtype` first. Floating or complex input; +-inf over an
// empty dim raises (max / min have no identity).
Tensor torch_norm(const Tensor& x, const NormOrd& ord, const std::optional<Shape>& dims,
                  bool keepdim, std::optional<DType> dtype);

// Each slice of x along dim whose p-norm exceeds maxnorm, scaled to norm maxnorm (torch.renorm).
Tensor renorm(const Tensor& x, double p, int64_t dim, double maxnorm);

// x summed down to `size`, which x must be expandable from (Tensor.sum_to_size).
Tensor sum_to_size(const Tensor& x, const Shape& size);

// torch.histogram: (hist, bin_edges) of x's values in `bins` equal-width bins over `range`
// (x's min and max when nullopt) or with the given 1-D edges; weights sum per bin; density
// divides by the total and the bin widths. Both results in x's floating dtype.
std::pair<Tensor, Tensor> histogram(const Tensor& x, std::optional<int64_t> bins,
                                    const Tensor* edges,
                                    std::optional<std::pair<double, double>> range,
                                    const Tensor* weight, bool density);

// The length-r combinations (with_replacement: multisets) of a 1-D x's elements, as the rows of
// a (count, r) tensor in itertools order (r == 0: an empty 1-D tensor). Differentiable in x.
Tensor combinations(const Tensor& x, int64_t r, bool with_replacement);

// torch.gradient's spacing along one dim: a scalar step (h) or 1-D coordinates (coords).
struct GradientSpacing {
  double h = 1.0;
  std::optional<Tensor> coords;
};
// Central differences inside and one-sided (edge_order 1 or 2) at the edges along each of
// `dims`, with one spacing per dim. Integer input computes in the default float dtype.
std::vector<Tensor> gradient(const Tensor& x, const std::vector<GradientSpacing>& spacing,
                             const Shape& dims, int64_t edge_order);

}  // namespace ts
