// ElementwiseIter: the one iterator behind elementwise kernels (and copies/casts).
// Operand 0 is the output; inputs broadcast to its shape with stride 0. Dims are ordered so
// the output is walked in memory order, size-1 dims dropped and adjacent dims coalesced;
// kernels then see 1-D runs: loop(char** ptrs, const int64_t* byte_strides, int64_t n).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/tensor.h"
#include "cpu/parallel.h"

namespace ts {

constexpr int kMaxOperands = 4;

// dst[(j * n + i) * es] = src[i * s0 + j * s1] for i < n, j < m (Note [Tiled iteration]).
void transpose_tile(const char* src, int64_t s0, int64_t s1, int64_t n, int64_t m, int64_t es,
                    char* dst);

struct ElementwiseIter {
  int nops = 0;
  char* base[kMaxOperands] = {};
  Shape shape;                        // innermost first, after coalescing
  Strides strides[kMaxOperands];      // bytes, innermost first
  int64_t elsize[kMaxOperands] = {};  // bytes per element
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

  // Note [Tiled iteration]: when an input's fastest dim is dim 1 while the output's is dim 0
  // (a + a.T), walking whole rows reads that input one cache line per element, and at a
  // power-of-two row pitch those lines all fall in the same cache sets and evict each other.
  // The (dim 0, dim 1) plane is walked instead in tiles of up to tile0 x kTile1 elements (tile
  // rows along dim 0, the output's contiguous direction). Each such "transposed" input's tile
  // is first copied, transposed, into a kTileBytes per-thread buffer (transpose_tile: it reads
  // the input along its own rows, 16 x 16 blocks in AVX-512 registers where the CPU has them)
  // and the loop then sees it as contiguous. Square 128 x 128 float32 tiles (64 KiB, held in
  // L2) read each input row of the tile as 512 contiguous bytes, which the hardware
  // prefetchers follow; 16-wide tiles (one cache line per row) ran 1.3x slower at 2048^2
  // (benchmarks/bench_core.py). Tiles go in blocks of kBlock1 rows of dim 1, band by band of
  // dim 0 within a block. Tiles depend only on the shape: results do not depend on the
  // thread count.
  static constexpr int64_t kMinTiled = 16;
  static constexpr int64_t kTile1 = 128;
  static constexpr int64_t kBlock1 = 128;
  static constexpr int64_t kTileBytes = 65536;
  // A tile's rows of the unbuffered operands are only n elements long (512 bytes for float32),
  // too short for the hardware prefetchers to get ahead: the tile walk asks for the lines of
  // the row kPrefetchRows ahead itself (1.1x at 2048^2).
  static constexpr int64_t kPrefetchRows = 2;

  void prefetch_row(char* const* tile_base, const bool* buffered, const int64_t* inner, int64_t j,
                    int64_t n) const {
    for (int k = 0; k < nops; ++k) {
      if (buffered[k] || inner[k] != elsize[k]) continue;
      const char* r = tile_base[k] + j * strides[k][1];
      for (int64_t off = 0; off < n * elsize[k]; off += 64) __builtin_prefetch(r + off);
    }
  }

  // kTileBytes for each of the (up to kMaxOperands - 1) transposed inputs, per thread: on the
  // heap, since 192 KiB would overflow small thread stacks.
  static char* tile_buffers() {
    thread_local std::vector<char> bufs;
    if (bufs.empty()) bufs.resize((kMaxOperands - 1) * kTileBytes + 64);
    const auto addr = reinterpret_cast<std::uintptr_t>(bufs.data());
    return bufs.data() + (64 - addr % 64) % 64;
  }

  // (i0, j0) of tile r of one 2-D plane with c0 bands of dim 0 and c1 tiles along dim 1.
  static void tile_origin(int64_t r, int64_t c0, int64_t c1, int64_t tile0, int64_t& i0,
                          int64_t& j0) {
    constexpr int64_t jb = kBlock1 / kTile1;  // tiles per full block
    const int64_t full = c1 / jb, in_full = c0 * jb * full;
    const int64_t w = r < in_full ? jb : c1 - full * jb;  // tiles across this block
    const int64_t first = r < in_full ? (r / (c0 * jb)) * jb : full * jb;
    const int64_t rr = r < in_full ? r % (c0 * jb) : r - in_full;
    i0 = (rr / w) * tile0;
    j0 = (first + rr % w) * kTile1;
  }

  bool transposed(int k) const {
    const int64_t s0 = strides[k][0] < 0 ? -strides[k][0] : strides[k][0];
    const int64_t s1 = strides[k][1] < 0 ? -strides[k][1] : strides[k][1];
    return s1 != 0 && s1 < s0;
  }

  bool needs_tiling() const {
    if (shape.size() < 2 || shape[0] < kMinTiled || shape[1] < kMinTiled) return false;
    for (int k = 1; k < nops; ++k)
      if (transposed(k)) return true;
    return false;
  }

  template <class Loop>
  void tiled_for_each(const Loop& loop, int64_t grain) const {
    const int64_t n0 = shape[0], n1 = shape[1], nd = shape.size();
    int64_t es_max = 1;
    for (int k = 0; k < nops; ++k) es_max = std::max(es_max, elsize[k]);
    const int64_t tile0 = kTileBytes / (kTile1 * es_max);
    const int64_t c0 = (n0 + tile0 - 1) / tile0, c1 = (n1 + kTile1 - 1) / kTile1;
    const int64_t outer = numel / (n0 * n1);
    bool buffered[kMaxOperands] = {};
    int64_t inner[kMaxOperands];
    for (int k = 0; k < nops; ++k) {
      buffered[k] = k > 0 && transposed(k);
      inner[k] = buffered[k] ? elsize[k] : strides[k][0];
    }
    parallel_for(0, outer * c0 * c1, std::max<int64_t>(1, grain / (tile0 * kTile1)),
                 [&](int64_t b, int64_t e) {
                   char* const bufs = tile_buffers();
                   char* p[kMaxOperands];
                   char* tile_base[kMaxOperands];
                   for (int64_t t = b; t < e; ++t) {
                     const int64_t o = t / (c0 * c1);
                     int64_t i0, j0;
                     tile_origin(t % (c0 * c1), c0, c1, tile0, i0, j0);
                     const int64_t n = std::min(tile0, n0 - i0), m = std::min(kTile1, n1 - j0);
                     for (int k = 0; k < nops; ++k) {
                       char* q = base[k] + i0 * strides[k][0] + j0 * strides[k][1];
                       int64_t rem = o;
                       for (int64_t d = 2; d < nd; ++d) {
                         q += (rem % shape[d]) * strides[k][d];
                         rem /= shape[d];
                       }
                       tile_base[k] = q;
                       if (buffered[k]) {
                         char* buf = bufs + (k - 1) * kTileBytes;
                         transpose_tile(q, strides[k][0], strides[k][1], n, m, elsize[k], buf);
                         tile_base[k] = buf;
                       }
                     }
                     for (int64_t j = 0; j < m; ++j) {
                       if (j + kPrefetchRows < m)
                         prefetch_row(tile_base, buffered, inner, j + kPrefetchRows, n);
                       for (int k = 0; k < nops; ++k)
                         p[k] = tile_base[k] + j * (buffered[k] ? n * elsize[k] : strides[k][1]);
                       loop(p, inner, n);
                     }
                   }
                 });
  }
};

}  // namespace ts
