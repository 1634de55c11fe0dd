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
  Shape shape;                    // innermost first, after coalescing
  Strides strides[kMaxOperands];  // bytes, innermost first
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
    if (needs_tiling()) {
      tiled_for_each(loop, grain);
      return;
    }
    parallel_for(0, numel, grain, [&](int64_t b, int64_t e) { serial_range(b, e, loop); });
  }

  // Note [Tiled iteration]: when an operand's fastest dim is dim 1 while the output's is dim 0
  // (a + a.T), walking whole rows reads that operand one cache line per element. Walking
  // kTile x kTile tiles instead keeps both operands' lines in L1 across the tile's rows.
  static constexpr int64_t kTile = 64;

  bool needs_tiling() const {
    if (shape.size() < 2 || shape[0] < kTile / 2 || shape[1] < kTile / 2) return false;
    for (int k = 0; k < nops; ++k) {
      const int64_t s0 = strides[k][0] < 0 ? -strides[k][0] : strides[k][0];
      const int64_t s1 = strides[k][1] < 0 ? -strides[k][1] : strides[k][1];
      if (s1 != 0 && s1 < s0) return true;
    }
    return false;
  }

  template <class Loop>
  void tiled_for_each(const Loop& loop, int64_t grain) const {
    const int64_t n0 = shape[0], n1 = shape[1];
    const int64_t t0 = (n0 + kTile - 1) / kTile, t1 = (n1 + kTile - 1) / kTile;
    const int64_t outer = numel / (n0 * n1);
    const int64_t nd = shape.size();
    int64_t inner[kMaxOperands];
    for (int k = 0; k < nops; ++k) inner[k] = strides[k][0];
    parallel_for(0, outer * t0 * t1, std::max<int64_t>(1, grain / (kTile * kTile)),
                 [&](int64_t b, int64_t e) {
                   char* p[kMaxOperands];
                   for (int64_t tile = b; tile < e; ++tile) {
                     const int64_t o = tile / (t0 * t1), r = tile % (t0 * t1);
                     const int64_t j0 = (r / t0) * kTile, i0 = (r % t0) * kTile;
                     char* base_o[kMaxOperands];
                     for (int k = 0; k < nops; ++k) {
                       char* q = base[k];
                       int64_t rem = o;
                       for (int64_t d = 2; d < nd; ++d) {
                         q += (rem % shape[d]) * strides[k][d];
                         rem /= shape[d];
                       }
                       base_o[k] = q + i0 * strides[k][0];
                     }
                     const int64_t n = std::min(kTile, n0 - i0), j1 = std::min(n1, j0 + kTile);
                     for (int64_t j = j0; j < j1; ++j) {
                       for (int k = 0; k < nops; ++k) p[k] = base_o[k] + j * strides[k][1];
                       loop(p, inner, n);
                     }
                   }
                 });
  }
};

}  // namespace ts
