// ElementwiseIter: the one iterator behind elementwise kernels (and copies/casts).
// Operand 0 is the output; inputs broadcast to its shape with stride 0. Dims are ordered so
// the output is walked in memory order, size-1 dims dropped and adjacent dims coalesced;
// kernels then see 1-D runs: loop(char** ptrs, const int64_t* byte_strides, int64_t n).
#pragma once
#include <cstdint>
#include <initializer_list>

#include "core/tensor.h"
#include "cpu/parallel.h"

namespace ts {

constexpr int kMaxOperands = 4;

struct ElementwiseIter {
  int nops = 0;
  char* base[kMaxOperands] = {};
  Shape shape;                      // innermost first, after coalescing
  Strides strides[kMaxOperands];    // bytes, innermost first
  int64_t numel = 0;

  // `out` fixes the iteration shape; every input must broadcast to it.
  static ElementwiseIter make(const Tensor& out, std::initializer_list<const Tensor*> inputs,
                              const char* op);

  // Runs `loop` over [begin, end) of the flattened iteration space.
  template <class Loop>
  void serial_range(int64_t begin, int64_t end, const Loop& loop) const {
    const int64_t nd = shape.size();
    if (nd == 0) {
      char* p[kMaxOperands];
      int64_t st[kMaxOperands] = {};
      for (int k = 0; k < nops; ++k) p[k] = base[k];
      if (begin < end) loop(p, st, 1);
      return;
    }
    int64_t idx[64];
    int64_t rem = begin;
    for (int64_t d = 0; d < nd; ++d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
    }
    int64_t inner[kMaxOperands];
    for (int k = 0; k < nops; ++k) inner[k] = strides[k][0];
    int64_t pos = begin;
    char* p[kMaxOperands];
    while (pos < end) {
      for (int k = 0; k < nops; ++k) {
        char* q = base[k];
        for (int64_t d = 0; d < nd; ++d) q += idx[d] * strides[k][d];
        p[k] = q;
      }
      const int64_t n = std::min(shape[0] - idx[0], end - pos);
      loop(p, inner, n);
      pos += n;
      idx[0] += n;
      for (int64_t d = 0; d < nd - 1 && idx[d] == shape[d]; ++d) {
        idx[d] = 0;
        ++idx[d + 1];
      }
    }
  }

  template <class Loop>
  void for_each(const Loop& loop, int64_t grain = kGrainSize) const {
    parallel_for(0, numel, grain, [&](int64_t b, int64_t e) { serial_range(b, e, loop); });
  }
};

}  // namespace ts
