// Note [Lane-vector pairwise sum] (reduce_simd.h). The loops are templates on the vector width
// VB (bytes) and hold kLaneBytes = 256 bytes of lanes as 256 / VB GCC vectors: lane for lane
// the same arithmetic at every width, instantiated for AVX-512 (64), AVX2 (32) and SSE2 (16)
// in functions compiled for that ISA and picked once at load time. Only adds, compares and
// selects: no contraction or reassociation can change a result.
#include "cpu/reduce_simd.h"

// The vector helpers are always inlined, so their (ISA-dependent) vector ABI never matters.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <cstring>
#include <limits>
#include <type_traits>

namespace ts::reduce_simd {
namespace {

// Forced: each ISA's entry point below must get its own copy compiled for that ISA.
#define TS_SIMD_INLINE inline __attribute__((always_inline))

constexpr int kLaneBytes = 256;
constexpr int64_t kLeaf = 1024;  // elements per leaf (a multiple of every lane count)
constexpr int kMaxDepth = 24;    // binary counter depth (2^24 leaves: far beyond kMaxRun)

template <class A, int VB>
struct Lanes {
  typedef A V __attribute__((vector_size(VB)));
  typedef std::conditional_t<sizeof(A) == 8, int64_t, int32_t> MI;
  typedef MI M __attribute__((vector_size(VB)));
  static constexpr int kW = VB / sizeof(A);               // elements per vector
  static constexpr int kV = kLaneBytes / VB;              // vectors per lane set
  static constexpr int kN = kLaneBytes / int(sizeof(A));  // lanes
  V v[kV];
};

template <class V, class A>
TS_SIMD_INLINE V load(const A* q) {
  V x;
  std::memcpy(&x, q, sizeof(x));
  return x;
}

// Sums n (a multiple of kN) elements lanewise into fresh accumulators.
template <class A, int VB>
TS_SIMD_INLINE void sum_leaf(const A* q, int64_t n, typename Lanes<A, VB>::V* acc) {
  using L = Lanes<A, VB>;
  using V = typename L::V;
  for (int k = 0; k < L::kV; ++k) acc[k] = load<V>(q + k * L::kW);
  for (int64_t i = L::kN; i < n; i += L::kN)
    for (int k = 0; k < L::kV; ++k) acc[k] += load<V>(q + i + k * L::kW);
}

// ((leaf 0 + leaf 1) + (leaf 2 + leaf 3)) of 4 full leaves, in registers: the same sums the
// binary counter would form, without its stores and reloads. The 4 leaves advance together
// (each still sums its own elements in order) so 4 x kV add chains overlap.
template <class A, int VB>
TS_SIMD_INLINE void sum_leaves4(const A* q, Lanes<A, VB>& out) {
  using L = Lanes<A, VB>;
  using V = typename L::V;
  V acc[4][L::kV];
  for (int l = 0; l < 4; ++l)
    for (int k = 0; k < L::kV; ++k) acc[l][k] = load<V>(q + l * kLeaf + k * L::kW);
  for (int64_t i = L::kN; i < kLeaf; i += L::kN)
    for (int l = 0; l < 4; ++l)
      for (int k = 0; k < L::kV; ++k) acc[l][k] += load<V>(q + l * kLeaf + i + k * L::kW);
  for (int k = 0; k < L::kV; ++k) out.v[k] = (acc[0][k] + acc[1][k]) + (acc[2][k] + acc[3][k]);
}

// kGrouped: full groups of 4 leaves go through sum_leaves4 (faster on cached data); without
// it every leaf is summed on its own, reading memory in one stream (Note [Streamed sums]).
// Both form the same tree, so the result is the same.
template <class A, int VB, bool kGrouped>
TS_SIMD_INLINE A sum_impl(const A* q, int64_t n) {
  using L = Lanes<A, VB>;
  const int64_t full = n / L::kN * L::kN;
  A r = A(0);
  if (full > 0) {
    // Binary counter over the leaves: stack[d] holds the partial of 2^level[d] leaves; equal
    // levels merge (left + right), so the tree depends on n alone.
    L stack[kMaxDepth];
    int level[kMaxDepth];
    int top = 0;
    for (int64_t i = 0; i < full;) {
      // Groups of 4 leaves start at multiples of 4 leaves, so pushing one at level 2 leaves
      // the counter exactly where 4 single pushes would.
      if (kGrouped && full - i >= 4 * kLeaf) {
        sum_leaves4<A, VB>(q + i, stack[top]);
        level[top++] = 2;
        i += 4 * kLeaf;
      } else {
        const int64_t m = full - i < kLeaf ? full - i : kLeaf;
        sum_leaf<A, VB>(q + i, m, stack[top].v);
        level[top++] = 0;
        i += m;
      }
      while (top >= 2 && level[top - 1] == level[top - 2]) {
        for (int k = 0; k < L::kV; ++k) stack[top - 2].v[k] += stack[top - 1].v[k];
        ++level[top - 2];
        --top;
      }
    }
    for (--top; top > 0; --top)  // right to left: stack[top - 1] + stack[top]
      for (int k = 0; k < L::kV; ++k) stack[top - 1].v[k] += stack[top].v[k];
    A lane[L::kN];
    std::memcpy(lane, stack[0].v, sizeof(lane));
    for (int w = L::kN / 2; w > 0; w /= 2)
      for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
    r = lane[0];
  }
  for (int64_t i = full; i < n; ++i) r += q[i];
  return r;
}

// Extremum with a NaN flag kept beside it (a NaN-propagating select does not vectorize).
template <bool IsMax, class A, int VB>
TS_SIMD_INLINE A extremum_impl(const A* q, int64_t n) {
  using L = Lanes<A, VB>;
  using V = typename L::V;
  using M = typename L::M;
  A r = IsMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
  bool nan = false;
  int64_t i = 0;
  if (n >= L::kN) {
    V acc[L::kV];
    M bad[L::kV];
    for (int k = 0; k < L::kV; ++k) {
      acc[k] = load<V>(q + k * L::kW);
      bad[k] = acc[k] != acc[k];
    }
    for (i = L::kN; i + L::kN <= n; i += L::kN)
      for (int k = 0; k < L::kV; ++k) {
        const V x = load<V>(q + i + k * L::kW);
        acc[k] = IsMax ? (x > acc[k] ? x : acc[k]) : (x < acc[k] ? x : acc[k]);
        bad[k] |= x != x;
      }
    for (int k = 1; k < L::kV; ++k) bad[0] |= bad[k];
    for (int j = 0; j < L::kW; ++j) nan |= bad[0][j] != 0;
    for (int k = 0; k < L::kV; ++k)
      for (int j = 0; j < L::kW; ++j) {
        const A x = acc[k][j];
        r = IsMax ? (x > r ? x : r) : (x < r ? x : r);
      }
  }
  for (; i < n; ++i) {
    const A x = q[i];
    r = IsMax ? (x > r ? x : r) : (x < r ? x : r);
    nan |= x != x;
  }
  return nan ? std::numeric_limits<A>::quiet_NaN() : r;
}

// One entry point per ISA and op; `pick` chooses once per process.
#if defined(__x86_64__) && defined(__GNUC__)
#define TS_ISA_VARIANTS(A, op, impl)                                                            \
  __attribute__((target("avx512f"))) A op##_avx512(const A* q, int64_t n) {                     \
    return impl<64>(q, n);                                                                      \
  }                                                                                             \
  __attribute__((target("avx2"))) A op##_avx2(const A* q, int64_t n) { return impl<32>(q, n); } \
  A op##_sse2(const A* q, int64_t n) { return impl<16>(q, n); }                                 \
  using op##_fn = A (*)(const A*, int64_t);                                                     \
  op##_fn op##_pick() {                                                                         \
    __builtin_cpu_init();                                                                       \
    if (__builtin_cpu_supports("avx512f")) return &op##_avx512;                                 \
    if (__builtin_cpu_supports("avx2")) return &op##_avx2;                                      \
    return &op##_sse2;                                                                          \
  }                                                                                             \
  const op##_fn op##_best = op##_pick();
#else
#define TS_ISA_VARIANTS(A, op, impl) \
  A op##_best(const A* q, int64_t n) { return impl<16>(q, n); }
#endif

template <int VB, class A>
TS_SIMD_INLINE A sum_w(const A* q, int64_t n) {
  return sum_impl<A, VB, true>(q, n);
}
template <int VB, class A>
TS_SIMD_INLINE A sum_stream_w(const A* q, int64_t n) {
  return sum_impl<A, VB, false>(q, n);
}
template <int VB, class A>
TS_SIMD_INLINE A max_w(const A* q, int64_t n) {
  return extremum_impl<true, A, VB>(q, n);
}
template <int VB, class A>
TS_SIMD_INLINE A min_w(const A* q, int64_t n) {
  return extremum_impl<false, A, VB>(q, n);
}

TS_ISA_VARIANTS(float, sum_f32, sum_w)
TS_ISA_VARIANTS(double, sum_f64, sum_w)
TS_ISA_VARIANTS(float, sum_stream_f32, sum_stream_w)
TS_ISA_VARIANTS(double, sum_stream_f64, sum_stream_w)
TS_ISA_VARIANTS(float, max_f32, max_w)
TS_ISA_VARIANTS(double, max_f64, max_w)
TS_ISA_VARIANTS(float, min_f32, min_w)
TS_ISA_VARIANTS(double, min_f64, min_w)
#undef TS_ISA_VARIANTS

}  // namespace

float sum(const float* q, int64_t n, bool from_memory) {
  return from_memory ? sum_stream_f32_best(q, n) : sum_f32_best(q, n);
}
double sum(const double* q, int64_t n, bool from_memory) {
  return from_memory ? sum_stream_f64_best(q, n) : sum_f64_best(q, n);
}
float max(const float* q, int64_t n) { return max_f32_best(q, n); }
double max(const double* q, int64_t n) { return max_f64_best(q, n); }
float min(const float* q, int64_t n) { return min_f32_best(q, n); }
double min(const double* q, int64_t n) { return min_f64_best(q, n); }

}  // namespace ts::reduce_simd
