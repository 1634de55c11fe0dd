// ReducePlan: the geometry of a reduction, after the dims are simplified.
// Note [Reduction plan]: the input's dims split into kept dims (they index the output) and
// reduced dims. Size-1 dims are dropped, negative strides flipped (a reduction's value does
// not depend on the walk direction along a dim; the output's stride is flipped with it), dims
// sorted innermost-first by input stride and adjacent dims of the same kind coalesced. Kernels
// then see at most one reduced dim (the op layer copies the input first when several reduced
// dims cannot coalesce) and pick:
//   inner: the reduced dim is the innermost (or nothing is kept): each output reduces one
//          strided run, pairwise over fixed blocks;
//   outer: a kept dim is innermost: rows of the reduced dim are accumulated into a block of
//          outputs with a vectorized loop over the kept dim (column sums).
// Block boundaries depend only on the shape, never on the thread count, so results are
// bit-identical for any number of threads.
#pragma once
#include <cstdint>

#include "core/tensor.h"

namespace ts {

struct ReducePlan {
  char* in = nullptr;   // input base (after flips)
  char* out = nullptr;  // output base (after flips)
  int64_t n_out = 1;    // number of outputs
  int64_t n_red = 1;    // elements reduced into each output
  // Reduced dims, innermost first: sizes and input byte strides.
  Shape red_sizes;
  Strides red_strides;
  // Kept dims, innermost first: sizes, input and output byte strides.
  Shape kept_sizes;
  Strides kept_in, kept_out;

  // `reduce[d]` marks the reduced dims of `in`; `out` has in's shape with reduced dims of
  // size 1 (keepdims form). With keep_reduced_order (argmax/argmin: one reduced dim), the
  // reduced dim is walked in index order, never flipped.
  static ReducePlan make(const Tensor& in, const SmallVec<bool, 8>& reduce, const Tensor& out,
                         bool keep_reduced_order = false);

  bool is_outer() const {
    return !kept_sizes.empty() && red_sizes.size() == 1 && kept_in[0] < red_strides[0];
  }
  // Byte offsets (input, output) of output number k, walking the kept dims from `first`.
  void kept_offsets(int64_t k, int first, int64_t& in_off, int64_t& out_off) const {
    in_off = out_off = 0;
    for (int64_t d = first; d < kept_sizes.size(); ++d) {
      const int64_t i = k % kept_sizes[d];
      k /= kept_sizes[d];
      in_off += i * kept_in[d];
      out_off += i * kept_out[d];
    }
  }
};

}  // namespace ts
