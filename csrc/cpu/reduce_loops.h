// The CPU reduction driver: given a ReducePlan (Note [Reduction plan]) and an Op, reduces each
// output's elements. Ops are structs { using A; static A init(); template <class T> static A
// load(T); static A combine(A, A); }.
//
// Note [Deterministic pairwise reduction]: a run of n elements is cut into fixed chunks of
// kChunk (reduced in parallel when the run is long), each chunk reduced pairwise down to
// leaves of kLeaf elements, and a leaf by kLanes independent accumulators (a loop the compiler
// vectorizes). Chunk partials are then combined pairwise in index order. Every cut depends on n
// alone, so the result is bit-identical for any thread count; float rounding error grows like
// O(log n) rather than O(n).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "cpu/convert.h"
#include "core/parallel.h"
#include "cpu/reduce_simd.h"
#include "cpu/simd_clones.h"
#include "iter/reduce_iter.h"

namespace ts::reduce_detail {

constexpr int kLanes = 16;
constexpr int64_t kLeaf = 256;
constexpr int64_t kChunk = int64_t(1) << 15;
// Runs longer than this are taken to come from memory (Note [Streamed sums]).
constexpr int64_t kCachedRunBytes = int64_t(4) << 20;

// The output type of sum/prod over T (the array API standard's defaults).
template <class T>
struct sum_type {
  using type = T;
};
#define TS_SUM_TYPE(T, R) \
  template <>             \
  struct sum_type<T> {    \
    using type = R;       \
  };
TS_SUM_TYPE(bool, int64_t)
TS_SUM_TYPE(int8_t, int64_t)
TS_SUM_TYPE(int16_t, int64_t)
TS_SUM_TYPE(int32_t, int64_t)
TS_SUM_TYPE(uint8_t, uint64_t)
TS_SUM_TYPE(uint16_t, uint64_t)
TS_SUM_TYPE(uint32_t, uint64_t)
#undef TS_SUM_TYPE
template <class T>
using sum_t = typename sum_type<T>::type;

template <class T>
inline T load_at(const char* p, int64_t i, int64_t s) {
  return *reinterpret_cast<const T*>(p + i * s);
}

// Note [NaN flag in extremum reductions]: a NaN-propagating max/min select does not
// vectorize, so float max/min ops provide `fast` (a plain compare-select that skips NaN, what
// maxps does) and the loops track NaN separately in an integer flag of the same width,
// returning NaN at the end when one was seen.
template <class Op, class = void>
struct has_nan_flag : std::false_type {};
template <class Op>
struct has_nan_flag<Op, std::void_t<decltype(Op::fast(typename Op::A(), typename Op::A()))>>
    : std::bool_constant<std::is_floating_point_v<typename Op::A>> {};

// Ops whose load is not the identity on T == A (sum of squares) must not take the raw-vector
// lane path, which feeds elements to combine unloaded.
template <class Op, class = void>
struct loads_squares : std::false_type {};
template <class Op>
struct loads_squares<Op, std::void_t<decltype(Op::kSquares)>> : std::true_type {};

// Ops with a vectorized contiguous float/double form in reduce_simd.h name it in kSimd.
enum class SimdKind { None, Sum, Max, Min };
template <class Op, class = void>
struct simd_kind : std::integral_constant<SimdKind, SimdKind::None> {};
template <class Op>
struct simd_kind<Op, std::void_t<decltype(Op::kSimd)>>
    : std::integral_constant<SimdKind, Op::kSimd> {};

template <class A>
using flag_t = std::conditional_t<sizeof(A) == 8, int64_t, int32_t>;

// Lane j accumulates elements i + j; with T == A in float/double the lane loops run on GCC
// vector types of VB bytes (lane for lane the same arithmetic as the scalar loop, so results
// do not depend on the vector width or on contiguity). 16-byte vectors: SSE2/NEON, which
// every x86-64/arm64 CPU has. (An AVX2 clone via target attributes did not inline the ops'
// vector code under GCC 12 and ran slower; runtime dispatch is future work.)
template <class Op, class T>
struct CombineLanes {
  template <int VB>
  static int64_t run(const T* q, int64_t n, typename Op::A* acc, void*) {
    using A = typename Op::A;
    typedef A V __attribute__((vector_size(VB)));
    constexpr int W = VB / sizeof(A), NV = kLanes / W;
    V va[NV];
    std::memcpy(va, acc, sizeof(va));
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int k = 0; k < NV; ++k) {
        V v;
        std::memcpy(&v, q + i + k * W, sizeof(V));
        va[k] = Op::combine(va[k], v);
      }
    std::memcpy(acc, va, sizeof(va));
    return i;
  }
};

// Note [NaN flag in extremum reductions], vectorized.
template <class Op, class T>
struct NanFlagLanes {
  template <int VB>
  static int64_t run(const T* q, int64_t n, typename Op::A* acc, void* flags) {
    using A = typename Op::A;
    using F = flag_t<A>;
    typedef A V __attribute__((vector_size(VB)));
    typedef F VF __attribute__((vector_size(VB)));
    constexpr int W = VB / sizeof(A), NV = kLanes / W;
    V va[NV];
    VF vb[NV];
    std::memcpy(va, acc, sizeof(va));
    std::memcpy(vb, flags, sizeof(vb));
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int k = 0; k < NV; ++k) {
        V v;
        std::memcpy(&v, q + i + k * W, sizeof(V));
        va[k] = Op::fast(va[k], v);
        vb[k] |= (VF)(v != v);
      }
    std::memcpy(acc, va, sizeof(va));
    std::memcpy(flags, vb, sizeof(vb));
    return i;
  }
};

template <class K, class T, class A>
int64_t simd_dispatch(const T* q, int64_t n, A* acc, void* flags = nullptr) {
  return K::template run<16>(q, n, acc, flags);
}

template <class Op, class T>
typename Op::A leaf_nan_flag(const char* p, int64_t n, int64_t s) {
  using A = typename Op::A;
  using F = flag_t<A>;
  A acc[kLanes];
  F bad[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = Op::init(), bad[j] = 0;
  int64_t i = 0;
  if constexpr (std::is_same_v<T, A>) {
    if (s == sizeof(T))
      i = simd_dispatch<NanFlagLanes<Op, T>>(reinterpret_cast<const T*>(p), n, acc, bad);
  } else if (s == sizeof(T)) {
    const T* q = reinterpret_cast<const T*>(p);
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j) {
        const A v = Op::load(q[i + j]);
        acc[j] = Op::fast(acc[j], v);
        bad[j] |= static_cast<F>(v != v);
      }
  }
  F any_bad = 0;
  for (int j = 0; j < kLanes; ++j) any_bad |= bad[j];
  A r = Op::init();
  for (int j = 0; j < kLanes; ++j) r = Op::fast(r, acc[j]);
  for (; i < n; ++i) {
    const A v = Op::load(load_at<T>(p, i, s));
    r = Op::fast(r, v);
    any_bad |= static_cast<F>(v != v);
  }
  return any_bad ? std::numeric_limits<A>::quiet_NaN() : r;
}

template <class Op, class T>
typename Op::A leaf_lanes(const char* p, int64_t n, int64_t s) {
  using A = typename Op::A;
  A acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = Op::init();
  int64_t i = 0;
  if (s == sizeof(T)) {
    const T* q = reinterpret_cast<const T*>(p);
    if constexpr (std::is_same_v<T, A> && std::is_floating_point_v<A> &&
                  !loads_squares<Op>::value) {
      i = simd_dispatch<CombineLanes<Op, T>>(q, n, acc);
    } else {
      for (; i + kLanes <= n; i += kLanes)
        for (int j = 0; j < kLanes; ++j) acc[j] = Op::combine(acc[j], Op::load(q[i + j]));
    }
  } else {
    for (; i + kLanes <= n; i += kLanes)
      for (int j = 0; j < kLanes; ++j)
        acc[j] = Op::combine(acc[j], Op::load(load_at<T>(p, i + j, s)));
  }
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) acc[j] = Op::combine(acc[j], acc[j + w]);
  A r = acc[0];
  for (; i < n; ++i) r = Op::combine(r, Op::load(load_at<T>(p, i, s)));
  return r;
}

template <class Op, class T>
typename Op::A leaf(const char* p, int64_t n, int64_t s) {
  if constexpr (has_nan_flag<Op>::value)
    return leaf_nan_flag<Op, T>(p, n, s);
  else
    return leaf_lanes<Op, T>(p, n, s);
}

template <class Op, class T>
typename Op::A pairwise(const char* p, int64_t n, int64_t s) {
  if (n <= kLeaf) return leaf<Op, T>(p, n, s);
  const int64_t h = (n / 2) / kLanes * kLanes;
  // Left half first: argument evaluation order is unspecified (GCC goes right to left), and
  // walking memory backwards block by block defeats the hardware prefetcher (7x slower).
  const typename Op::A left = pairwise<Op, T>(p, h, s);
  return Op::combine(left, pairwise<Op, T>(p + h * s, n - h, s));
}

template <class Op>
typename Op::A combine_all(const typename Op::A* a, int64_t n) {
  if (n == 1) return a[0];
  const int64_t h = n / 2;
  const typename Op::A left = combine_all<Op>(a, h);
  return Op::combine(left, combine_all<Op>(a + h, n - h));
}

// One chunk (at most kChunk elements): contiguous float/double runs of sum/max/min take the
// vectorized forms (Note [Lane-vector pairwise sum]), everything else the pairwise walk.
template <class Op, class T>
typename Op::A reduce_chunk(const char* p, int64_t n, int64_t s, bool from_memory = false) {
  using A = typename Op::A;
  constexpr SimdKind kind = simd_kind<Op>::value;
  if constexpr (kind != SimdKind::None && std::is_same_v<T, A> &&
                (std::is_same_v<A, float> || std::is_same_v<A, double>)) {
    static_assert(kChunk <= reduce_simd::kMaxRun);
    if (s == sizeof(T)) {
      const T* q = reinterpret_cast<const T*>(p);
      if constexpr (kind == SimdKind::Sum) return reduce_simd::sum(q, n, from_memory);
      if constexpr (kind == SimdKind::Max) return reduce_simd::max(q, n);
      if constexpr (kind == SimdKind::Min) return reduce_simd::min(q, n);
    }
  }
  return pairwise<Op, T>(p, n, s);
}

// One strided run (Note [Deterministic pairwise reduction]).
template <class Op, class T>
typename Op::A reduce_run(const char* p, int64_t n, int64_t s) {
  if (n <= kChunk) return reduce_chunk<Op, T>(p, n, s);
  using A = typename Op::A;
  const int64_t nc = (n + kChunk - 1) / kChunk;
  std::unique_ptr<A[]> part(new A[nc]);
  const bool from_memory = n * static_cast<int64_t>(sizeof(T)) > kCachedRunBytes;
  parallel_for(0, nc, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c)
      part[c] =
          reduce_chunk<Op, T>(p + c * kChunk * s, std::min(kChunk, n - c * kChunk), s, from_memory);
  });
  return combine_all<Op>(part.get(), nc);
}

// Rounds an accumulator to the output type, dividing by `div` first (mean).
template <class R, class A>
inline void store(char* o, A a, double div) {
  if constexpr (std::is_floating_point_v<A>) {
    if (div != 1.0) a = a / static_cast<A>(div);
  } else if constexpr (is_complex_v<A>) {
    if (div != 1.0) a = a / static_cast<typename A::value_type>(div);
  }
  *reinterpret_cast<R*>(o) = convert<R, A>(a);
}

// Calls f(in, n, stride, out) for the one strided run each output reduces, outputs in
// parallel (shared by the value and the arg reductions).
template <class F>
void for_each_inner_run(const ReducePlan& p, const F& f) {
  const int64_t n = p.red_sizes[0], s = p.red_strides[0];
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  parallel_for(0, p.n_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      int64_t io, oo;
      p.kept_offsets(k, 0, io, oo);
      f(p.in + io, n, s, p.out + oo);
    }
  });
}

// Each output reduces one strided run; outputs in parallel, or chunks of a long run.
template <class Op, class T, class R>
void run_inner(const ReducePlan& p, double div) {
  for_each_inner_run(p, [&](char* in, int64_t n, int64_t s, char* out) {
    store<R>(out, reduce_run<Op, T>(in, n, s), div);
  });
}

// blk[c] = (((blk[c] + q0[c]) + q1[c]) + q2[c]) + q3[c] (Op's combine) for c < w, and for
// the extremum ops a NaN flag beside it: the column sweep of run_outer.
template <class Op, class T>
inline __attribute__((always_inline)) void sweep_rows4(typename Op::A* blk,
                                                       flag_t<typename Op::A>* bad, const T* q0,
                                                       const T* q1, const T* q2, const T* q3,
                                                       int64_t w) {
  using A = typename Op::A;
  if constexpr (has_nan_flag<Op>::value) {
    for (int64_t c = 0; c < w; ++c) {
      const A v0 = Op::load(q0[c]), v1 = Op::load(q1[c]);
      const A v2 = Op::load(q2[c]), v3 = Op::load(q3[c]);
      blk[c] = Op::fast(Op::fast(Op::fast(Op::fast(blk[c], v0), v1), v2), v3);
      bad[c] |= static_cast<flag_t<A>>((v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3));
    }
  } else {
    (void)bad;
    for (int64_t c = 0; c < w; ++c)
      blk[c] = Op::combine(
          Op::combine(Op::combine(Op::combine(blk[c], Op::load(q0[c])), Op::load(q1[c])),
                      Op::load(q2[c])),
          Op::load(q3[c]));
  }
}

// sweep_rows4 compiled per ISA (Note [SIMD clones]) for float/double columns: vectorized
// across columns, so each column's additions keep their order and every clone its bits.
template <class Op, class T>
TS_SIMD_CLONES_WIDE void sweep_rows4_simd(typename Op::A* blk, flag_t<typename Op::A>* bad,
                                          const T* q0, const T* q1, const T* q2, const T* q3,
                                          int64_t w) {
  sweep_rows4<Op, T>(blk, bad, q0, q1, q2, q3, w);
}

// The innermost dim is kept: accumulate rows of the reduced dim into a block of kCols
// outputs (vectorized across the kept dim), kRows rows at a time into a block partial that
// is then folded into the total, which bounds float error growth.
template <class Op, class T, class R>
void run_outer(const ReducePlan& p, double div) {
  using A = typename Op::A;
  constexpr int64_t kCols = 2048 * 4 / sizeof(A) < 256 ? 256 : 2048 * 4 / sizeof(A);
  constexpr int64_t kRows = 64;
  const int64_t m0 = p.kept_sizes[0], s0 = p.kept_in[0], o0 = p.kept_out[0];
  const int64_t n = p.red_sizes[0], sr = p.red_strides[0];
  // Narrower column blocks when there are fewer blocks than threads (a column's result never
  // depends on its block, so this keeps results thread-count independent).
  int64_t cols = kCols;
  while (cols > 64 && (p.n_out / m0) * ((m0 + cols - 1) / cols) < get_num_threads()) cols /= 2;
  const int64_t ncb = (m0 + cols - 1) / cols;
  const int64_t ntask = (p.n_out / m0) * ncb;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols * n, 1));
  parallel_for(0, ntask, grain, [&](int64_t b, int64_t e) {
    A tot[kCols], blk[kCols];
    flag_t<A> bad[kCols];
    for (int64_t t = b; t < e; ++t) {
      const int64_t c0 = (t % ncb) * cols, w = std::min(cols, m0 - c0);
      int64_t io, oo;
      p.kept_offsets(t / ncb, 1, io, oo);
      const char* base = p.in + io + c0 * s0;
      for (int64_t c = 0; c < w; ++c) tot[c] = Op::init(), bad[c] = 0;
      for (int64_t r0 = 0; r0 < n; r0 += kRows) {
        for (int64_t c = 0; c < w; ++c) blk[c] = Op::init();
        const int64_t r1 = std::min(n, r0 + kRows);
        int64_t r = r0;
        if (s0 == sizeof(T))  // four rows per sweep: a quarter of the blk/bad traffic
          for (; r + 4 <= r1; r += 4) {
            const T* q0 = reinterpret_cast<const T*>(base + r * sr);
            const T* q1 = reinterpret_cast<const T*>(base + (r + 1) * sr);
            const T* q2 = reinterpret_cast<const T*>(base + (r + 2) * sr);
            const T* q3 = reinterpret_cast<const T*>(base + (r + 3) * sr);
            if constexpr (std::is_same_v<T, A> &&
                          (std::is_same_v<A, float> || std::is_same_v<A, double>))
              sweep_rows4_simd<Op, T>(blk, bad, q0, q1, q2, q3, w);
            else
              sweep_rows4<Op, T>(blk, bad, q0, q1, q2, q3, w);
          }
        for (; r < r1; ++r) {
          const char* row = base + r * sr;
          if constexpr (has_nan_flag<Op>::value) {  // Note [NaN flag in extremum reductions]
            if (s0 == sizeof(T)) {
              const T* q = reinterpret_cast<const T*>(row);
              for (int64_t c = 0; c < w; ++c) {
                const A v = Op::load(q[c]);
                blk[c] = Op::fast(blk[c], v);
                bad[c] |= static_cast<flag_t<A>>(v != v);
              }
              continue;
            }
          }
          if (s0 == sizeof(T)) {
            const T* q = reinterpret_cast<const T*>(row);
            for (int64_t c = 0; c < w; ++c) blk[c] = Op::combine(blk[c], Op::load(q[c]));
          } else {
            for (int64_t c = 0; c < w; ++c)
              blk[c] = Op::combine(blk[c], Op::load(load_at<T>(row, c, s0)));
          }
        }
        for (int64_t c = 0; c < w; ++c) tot[c] = Op::combine(tot[c], blk[c]);
      }
      if constexpr (has_nan_flag<Op>::value)
        for (int64_t c = 0; c < w; ++c)
          if (bad[c]) tot[c] = std::numeric_limits<A>::quiet_NaN();
      char* o = p.out + oo + c0 * o0;
      for (int64_t c = 0; c < w; ++c) store<R>(o + c * o0, tot[c], div);
    }
  });
}

template <class Op, class T, class R>
void run_reduce(const ReducePlan& p, double div) {
  // Few kept columns walk better as strided runs (pairwise, parallel over chunks).
  if (p.is_outer() && p.kept_sizes[0] >= 16)
    run_outer<Op, T, R>(p, div);
  else
    run_inner<Op, T, R>(p, div);
}

template <class T>
constexpr T lowest() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T highest() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

}  // namespace ts::reduce_detail
