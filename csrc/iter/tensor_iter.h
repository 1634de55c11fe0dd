// ElementwiseIter: the one iterator behind elementwise kernels (and copies/casts).
// Operand 0 is the output; inputs broadcast to its shape with stride 0. Dims are ordered so
// the output is walked in memory order, size-1 dims dropped and adjacent dims coalesced;
// kernels then see 1-D runs: loop(char** ptrs, const int64_t* byte_strides, int64_t n).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/tensor.h"

namespace ts {

constexpr int kMaxOperands = 4;

// The byte-stride array a loop receives has one more slot after the operands' strides:
// s[kRunFlags] holds flags about the run (Note [Streaming tile stores]).
constexpr int kRunFlags = kMaxOperands;
constexpr int64_t kStreamStores = 1;

// `rows` rows of `bytes` bytes each, `pitch` bytes apart, from `base`: a tile's source rows.
struct TileRows {
  const char* base;
  int64_t pitch, rows, bytes;
  void prefetch(int64_t r0, int64_t r1) const {  // rows r0 .. r1 - 1
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(base + r * pitch + off);
  }
};

// dst[(j * pitch + i) * es] = src[i * s0 + j * s1] for i < n, j < m (Note [Tiled iteration]).
// `stream` asks for non-temporal stores where the path has them (Note [Streaming tile
// stores]); `next`, if given, is prefetched along the way (Note [Next tile prefetch]).
void transpose_tile(const char* src, int64_t s0, int64_t s1, int64_t n, int64_t m, int64_t es,
                    char* dst, int64_t pitch, bool stream = false, const TileRows* next = nullptr);

// Orders this thread's non-temporal stores before what follows (Note [Streaming tile stores]).
void store_fence();

// Note [Output strides]: a new elementwise output takes the stride order of its inputs, as
// PyTorch's TensorIterator allocates it (so (x.T + 1) is laid out like x.T and a channels-last
// tensor stays channels-last through relu/add/where/casts/comparisons). `inputs` in the op's
// operand order (it decides ties). When every input has the output's shape (fast setup): all
// contiguous -> row-major; all channels-last (4-D) -> channels-last; all non-overlapping and
// dense with identical strides -> those strides. Otherwise each input's strides are aligned to
// the output's dims (0 on broadcast dims; a size-1 dim keeps its stride where the output's dim
// is also 1) and the dims are insertion-sorted innermost-first from the row-major order: the
// first input whose strides on the two dims are both nonzero and differ decides; equal strides
// put the larger dim outer; an input with a zero stride on either dim has no say; no say at
// all keeps the row-major order. The output is then dense in that order (sizes multiplied as
// they are, so a 0-size dim gives later dims stride 0, as PyTorch). Negative strides (which
// PyTorch lacks) count by magnitude. Returns the strides in elements, or empty for row-major.
// ElementwiseIter::make then walks the output in memory order and coalesces the dims that
// every operand walks as one: a permuted-dense output whose inputs share its permutation is a
// single flat contiguous run (channels-last relu: no copy, one loop).
Strides output_strides(const Shape& shape, std::initializer_list<const Tensor*> inputs);
// PyTorch's insertion sort of dims under a comparison that may have no say: `perm` (innermost
// first) starts in row-major order; should_swap(d0, d1) > 0 moves d0 (inner) outside d1, < 0
// keeps it inside, 0 compares d1 with the next dim further in (TensorIterator's
// reorder_dimensions, infer_dense_strides).
template <class Perm, class Cmp>
void sort_dims(Perm& perm, const Cmp& should_swap) {
  const int64_t n = static_cast<int64_t>(perm.size());
  for (int64_t i = 1; i < n; ++i) {
    int64_t d1 = i;
    for (int64_t d0 = i - 1; d0 >= 0; --d0) {
      const int c = should_swap(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
}
// The dims of size > 1, by stride, pack exactly their elements' count of consecutive slots
// (PyTorch's is_non_overlapping_and_dense for a non-empty geometry: any dim order).
bool is_packed(const Shape& shape, const Strides& strides);

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
      int64_t st[kMaxOperands + 1] = {};
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
    int64_t inner[kMaxOperands + 1] = {};
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
  // prefetchers follow; 16-wide tiles (one cache line per row) ran 1.3x slower at 2048^2, and
  // 64 x 256 tiles (shorter runs of the output) 1.2x slower with streamed stores. Tiles go in
  // blocks of about kBlock0 x kBlock1 elements (tiles along dim 1 outer, along dim 0 inner
  // within a block), so that the pages a block touches (512 rows of each operand) stay in the
  // TLB while it runs. Tiles depend only on the shape: results do not depend on the thread
  // count (benchmarks/bench_core.py; the sweeps behind these sizes are in docs/benchmarks.md).
  static constexpr int64_t kMinTiled = 16;
  static constexpr int64_t kTile1 = 128;
  static constexpr int64_t kBlock0 = 512;
  static constexpr int64_t kBlock1 = 512;
  static constexpr int64_t kTileBytes = 65536;
  // A tile's rows of the unbuffered operands are only n elements long (512 bytes for float32),
  // too short for the hardware prefetchers to get ahead: the tile walk asks for the lines of
  // the row kPrefetchRows ahead itself. The output is left out when its stores stream.
  static constexpr int64_t kPrefetchRows = 2;
  // Note [Streaming tile stores]: a tiled walk writes its output a few hundred bytes per row
  // across hundreds of rows, so every output line is first read from memory (read for
  // ownership) only to be overwritten. Outputs of at least kStreamBytes (beyond what the
  // caches would keep for the next op anyway) are written with non-temporal stores instead:
  // the walk sets kStreamStores in the loop's run flags, loops that can stream (cpu/loops.h:
  // contiguous float32/float64 outputs on AVX-512) write whole 64-byte lines around the
  // caches, and each thread fences its streamed stores before its part of the walk ends.
  // 1.3-1.5x on 2048^2 float32 a + a.T; outputs that stay in cache would lose by it.
  static constexpr int64_t kStreamBytes = int64_t{8} << 20;

  void prefetch_row(char* const* tile_base, const bool* buffered, const int64_t* inner, int64_t j,
                    int64_t n, bool streaming) const {
    for (int k = streaming ? 1 : 0; k < nops; ++k) {
      if (buffered[k] || inner[k] != elsize[k]) continue;
      TileRows{tile_base[k], strides[k][1], 1, n * elsize[k]}.prefetch(j, j + 1);
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

  // (i0, j0) of tile r of one 2-D plane of c0 x c1 tiles (tile0 x tile1 elements each), in
  // blocks of b0 x b1 tiles: blocks along dim 1 outer, along dim 0 inner; within a block
  // tiles along dim 1 outer. Partial blocks at the far edges.
  static void tile_origin(int64_t r, int64_t c0, int64_t c1, int64_t b0, int64_t b1, int64_t tile0,
                          int64_t tile1, int64_t& i0, int64_t& j0) {
    const int64_t bj = std::min(r / (b1 * c0), (c1 - 1) / b1);  // block column
    r -= bj * b1 * c0;
    const int64_t w1 = std::min(b1, c1 - bj * b1);  // tiles across this block column
    const int64_t bi = std::min(r / (b0 * w1), (c0 - 1) / b0);
    r -= bi * b0 * w1;
    const int64_t w0 = std::min(b0, c0 - bi * b0);
    i0 = (bi * b0 + r % w0) * tile0;
    j0 = (bj * b1 + r / w0) * tile1;
  }

  bool transposed(int k) const {
    const int64_t s0 = strides[k][0] < 0 ? -strides[k][0] : strides[k][0];
    const int64_t s1 = strides[k][1] < 0 ? -strides[k][1] : strides[k][1];
    return s1 != 0 && s1 < s0;
  }

  // Note [Mirrored tiles]: in a + a.T (or a batched a + a.mT) one input is another input seen
  // transposed: same base, dims 0 and 1 swapped. Tile (i, j) then reads the same memory as
  // tile (j, i), so the walk takes square tiles in mirrored pairs, (i, j) right after (j, i),
  // and the second tile of a pair finds both its inputs in L2: each input byte comes from
  // memory once, as in a + a. Results are unchanged (every output element is still computed
  // once, from the same inputs); only the order of tiles differs. Not when the output's bytes
  // may overlap the inputs', since a pair's second tile re-reads what the first one read.
  bool mirrored() const {
    if (shape[0] != shape[1]) return false;
    for (int k = 1; k < nops; ++k) {
      if (!transposed(k)) continue;
      for (int q = 1; q < nops; ++q) {
        if (q == k || base[q] != base[k] || elsize[q] != elsize[k] ||
            strides[q][0] != strides[k][1] || strides[q][1] != strides[k][0])
          continue;
        bool same_outer = true;
        for (int64_t d = 2; d < shape.size(); ++d) same_outer &= strides[q][d] == strides[k][d];
        if (same_outer && !overlaps_output(k)) return true;
      }
    }
    return false;
  }

  // Lowest and one-past-highest byte operand k touches.
  void extent(int k, const char*& lo, const char*& hi) const {
    lo = base[k];
    hi = base[k] + elsize[k];
    for (int64_t d = 0; d < shape.size(); ++d) {
      const int64_t span = (shape[d] - 1) * strides[k][d];
      (span < 0 ? lo : hi) += span;
    }
  }

  bool overlaps_output(int k) const {
    const char *lo0, *hi0, *lo, *hi;
    extent(0, lo0, hi0);
    extent(k, lo, hi);
    return lo0 < hi && lo < hi0;
  }

  // (i0, j0) of tile r of a c x c plane of square tiles of `tile` elements, in mirrored pairs:
  // for j = 0, 1, ...: (0, j), (j, 0), (1, j), (j, 1), ..., (j, j).
  static void mirror_origin(int64_t r, int64_t tile, int64_t& i0, int64_t& j0) {
    int64_t j = static_cast<int64_t>(std::sqrt(static_cast<double>(r)));
    while (j * j > r) --j;
    while ((j + 1) * (j + 1) <= r) ++j;
    const int64_t rem = r - j * j, i = rem / 2;
    const bool flip = rem % 2 != 0;
    i0 = (rem == 2 * j ? j : flip ? j : i) * tile;
    j0 = (rem == 2 * j ? j : flip ? i : j) * tile;
  }

  bool needs_tiling() const {
    if (shape.size() < 2 || shape[0] < kMinTiled || shape[1] < kMinTiled) return false;
    for (int k = 1; k < nops; ++k)
      if (transposed(k)) return true;
    return false;
  }

  // The tiles of one walk: their shape, count and order.
  struct TileGrid {
    bool mirror;
    int64_t tile0, tile1, c0, c1, b0, b1;
  };

  // Where tile t of the walk starts (in every operand) and how big it is.
  struct TileAt {
    char* q[kMaxOperands];
    int64_t n, m;
  };

  TileGrid tile_grid() const {
    int64_t es_max = 1;
    for (int k = 0; k < nops; ++k) es_max = std::max(es_max, elsize[k]);
    TileGrid g{};
    g.mirror = mirrored();
    g.tile0 = kTileBytes / (kTile1 * es_max);
    g.tile1 = kTile1;
    if (g.mirror) g.tile0 = g.tile1 = std::min(g.tile0, g.tile1);
    g.c0 = (shape[0] + g.tile0 - 1) / g.tile0;
    g.c1 = (shape[1] + g.tile1 - 1) / g.tile1;
    g.b0 = std::max<int64_t>(1, kBlock0 / g.tile0);
    g.b1 = kBlock1 / g.tile1;
    return g;
  }

  TileAt tile_at(const TileGrid& g, int64_t t) const {
    const int64_t o = t / (g.c0 * g.c1);
    int64_t i0, j0;
    if (g.mirror)
      mirror_origin(t % (g.c0 * g.c1), g.tile0, i0, j0);
    else
      tile_origin(t % (g.c0 * g.c1), g.c0, g.c1, g.b0, g.b1, g.tile0, g.tile1, i0, j0);
    TileAt a;
    a.n = std::min(g.tile0, shape[0] - i0);
    a.m = std::min(g.tile1, shape[1] - j0);
    for (int k = 0; k < nops; ++k) {
      char* q = base[k] + i0 * strides[k][0] + j0 * strides[k][1];
      int64_t rem = o;
      for (int64_t d = 2; d < static_cast<int64_t>(shape.size()); ++d) {
        q += (rem % shape[d]) * strides[k][d];
        rem /= shape[d];
      }
      a.q[k] = q;
    }
    return a;
  }

  // Note [Next tile prefetch]: transpose_tile reads its tile as n rows of m elements, each
  // row a separate short run that the hardware prefetchers barely start on, so copying a tile
  // waits on memory, and the loops over the previous tile's rows then leave it idle: the two
  // phases do not overlap. While the loop runs over row j of this tile (of m), the walk asks
  // for the lines of the next tile's transposed rows in proportion (rows j * n / m up to
  // (j + 1) * n / m), so they arrive while this tile computes. 2048^2 float32, one thread:
  // a + a.T 2.54 -> 2.23 ms, a + b.T 4.25 -> 3.74 ms; two or three tiles ahead did no better.
  void prefetch_next(const TileAt& next, const bool* buffered, int64_t j, int64_t m) const {
    for (int k = 1; k < nops; ++k)
      if (buffered[k])
        TileRows{next.q[k], strides[k][0], next.n, next.m * elsize[k]}.prefetch(
            j * next.n / m, (j + 1) * next.n / m);
  }

  // Note [Transposing copy]: a same-type copy whose input is transposed (x.T.contiguous(),
  // ascontiguousarray of a transpose) needs no tile buffer: each tile is transposed straight
  // into the output, streamed past the caches when the output is large, with the next tile's
  // rows prefetched along the way.
  bool transposing_copy() const {
    return nops == 2 && needs_tiling() && elsize[0] == elsize[1] && strides[0][0] == elsize[0] &&
           strides[0][1] % elsize[0] == 0 && transposed(1) && !overlaps_output(1);
  }
  void transpose_copy(int64_t grain = kGrainSize) const;

  template <class Loop>
  void tiled_for_each(const Loop& loop, int64_t grain) const {
    const TileGrid g = tile_grid();
    const int64_t planes = numel / (shape[0] * shape[1]);
    bool buffered[kMaxOperands] = {};
    int64_t inner[kMaxOperands + 1] = {};
    for (int k = 0; k < nops; ++k) {
      buffered[k] = k > 0 && transposed(k);
      inner[k] = buffered[k] ? elsize[k] : strides[k][0];
    }
    const bool streaming = inner[0] == elsize[0] && numel * elsize[0] >= kStreamBytes;
    if (streaming) inner[kRunFlags] = kStreamStores;
    parallel_for(0, planes * g.c0 * g.c1, std::max<int64_t>(1, grain / (g.tile0 * g.tile1)),
                 [&](int64_t b, int64_t e) {
                   char* const bufs = tile_buffers();
                   char* p[kMaxOperands];
                   char* tile_base[kMaxOperands];
                   TileAt next = tile_at(g, b);
                   for (int64_t t = b; t < e; ++t) {
                     const TileAt cur = next;
                     const bool more = t + 1 < e;
                     if (more) next = tile_at(g, t + 1);
                     const int64_t n = cur.n, m = cur.m;
                     for (int k = 0; k < nops; ++k) {
                       tile_base[k] = cur.q[k];
                       if (buffered[k]) {
                         char* buf = bufs + (k - 1) * kTileBytes;
                         transpose_tile(cur.q[k], strides[k][0], strides[k][1], n, m, elsize[k],
                                        buf, n);
                         tile_base[k] = buf;
                       }
                     }
                     for (int64_t j = 0; j < m; ++j) {
                       if (j + kPrefetchRows < m)
                         prefetch_row(tile_base, buffered, inner, j + kPrefetchRows, n, streaming);
                       if (more) prefetch_next(next, buffered, j, m);
                       for (int k = 0; k < nops; ++k)
                         p[k] = tile_base[k] + j * (buffered[k] ? n * elsize[k] : strides[k][1]);
                       loop(p, inner, n);
                     }
                   }
                   if (streaming) store_fence();
                 });
  }
};

}  // namespace ts
