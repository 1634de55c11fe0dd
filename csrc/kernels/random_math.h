// The arithmetic of the random ops, shared by the CPU kernels (cpu/random_kernels.cpp) and the
// CUDA ones (cuda/random_kernels.cu): Philox4x32-10 and the maps from its 32-bit words to
// uniforms, normals and dropout decisions. Header-only and __host__ __device__ under nvcc.
//
// Note [Bit-identical random numbers]: a CUDA kernel reproduces the CPU's values exactly only
// if both evaluate the same IEEE operations in the same order. Two things differ by default:
// nvcc contracts a * b + c into one fused multiply-add (one rounding instead of two), and the
// device's log/sin/cos are not glibc's. So every floating operation below goes through rn_*,
// which on the device are the round-to-nearest intrinsics nvcc never contracts (on the host,
// the portable x86-64 target has no FMA to contract into), and log/sincos are our own
// branch-free polynomial versions (Cephes for float32, fdlibm's kernels for float64), never
// libm's. sqrt is correctly rounded on both sides.
#pragma once
#include <cstdint>
#include <cstring>

#ifndef TS_HD
#ifdef __CUDACC__
#define TS_HD __host__ __device__
#else
#define TS_HD
#endif
#endif

namespace ts::rng {

// ---- Philox4x32-10 (Note [Counter-based RNG] in ops/random.h)
struct Philox4x32 {
  uint32_t w[4];
  TS_HD uint32_t operator[](int i) const { return w[i]; }
};

TS_HD inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#ifdef __CUDA_ARCH__
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const uint64_t p = uint64_t{a} * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
#endif
}

// One of the ten rounds: the counter (c0..c3) under the round key (k0, k1).
TS_HD inline void philox_round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                               uint32_t k1) {
  uint32_t h0, l0, h1, l1;
  mulhilo(0xD2511F53u, c0, h0, l0);
  mulhilo(0xCD9E8D57u, c2, h1, l1);
  c0 = h1 ^ c1 ^ k0;
  c2 = h0 ^ c3 ^ k1;
  c1 = l1;
  c3 = l0;
}
constexpr uint32_t kPhiloxBump0 = 0x9E3779B9u, kPhiloxBump1 = 0xBB67AE85u;  // key schedule

TS_HD inline Philox4x32 philox4x32_10(uint64_t block, uint64_t offset, uint64_t seed) {
  uint32_t c0 = static_cast<uint32_t>(block), c1 = static_cast<uint32_t>(block >> 32);
  uint32_t c2 = static_cast<uint32_t>(offset), c3 = static_cast<uint32_t>(offset >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    philox_round(c0, c1, c2, c3, k0, k1);
    k0 += kPhiloxBump0;
    k1 += kPhiloxBump1;
  }
  return {{c0, c1, c2, c3}};
}

// ---- IEEE operations that are never fused (Note [Bit-identical random numbers])
#ifdef __CUDA_ARCH__
TS_HD inline float rn_add(float a, float b) { return __fadd_rn(a, b); }
TS_HD inline float rn_sub(float a, float b) { return __fsub_rn(a, b); }
TS_HD inline float rn_mul(float a, float b) { return __fmul_rn(a, b); }
TS_HD inline double rn_add(double a, double b) { return __dadd_rn(a, b); }
TS_HD inline double rn_sub(double a, double b) { return __dsub_rn(a, b); }
TS_HD inline double rn_mul(double a, double b) { return __dmul_rn(a, b); }
TS_HD inline double rn_div(double a, double b) { return __ddiv_rn(a, b); }
TS_HD inline float rn_sqrt(float a) { return __fsqrt_rn(a); }
TS_HD inline double rn_sqrt(double a) { return __dsqrt_rn(a); }
TS_HD inline uint32_t bits_of(float f) { return __float_as_uint(f); }
TS_HD inline float float_of(uint32_t b) { return __uint_as_float(b); }
TS_HD inline uint64_t bits_of(double f) { return static_cast<uint64_t>(__double_as_longlong(f)); }
TS_HD inline double double_of(uint64_t b) {
  return __longlong_as_double(static_cast<long long>(b));
}
#else
inline float rn_add(float a, float b) { return a + b; }
inline float rn_sub(float a, float b) { return a - b; }
inline float rn_mul(float a, float b) { return a * b; }
inline double rn_add(double a, double b) { return a + b; }
inline double rn_sub(double a, double b) { return a - b; }
inline double rn_mul(double a, double b) { return a * b; }
inline double rn_div(double a, double b) { return a / b; }
inline float rn_sqrt(float a) { return __builtin_sqrtf(a); }
inline double rn_sqrt(double a) { return __builtin_sqrt(a); }
inline uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline uint64_t bits_of(double f) {
  uint64_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
inline double double_of(uint64_t b) {
  double f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
#endif

// ---- uniforms: as many random bits as the target's significand holds, so the value is
// exact in it and never rounds up to 1.
TS_HD inline uint64_t u64(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }
// [0, 1) from the top Bits bits of w (Bits <= 24: exact in float).
template <int Bits>
TS_HD inline float unit_bits(uint32_t w) {
  return static_cast<float>(w >> (32 - Bits)) * (1.0f / static_cast<float>(1u << Bits));
}
// [0, 1) with 53 bits, for float64.
TS_HD inline double unit53(uint32_t w0, uint32_t w1) {
  return static_cast<double>(u64(w0, w1) >> 11) * 0x1p-53;
}
// low + span * u in double, rounded to the compute type A of the target and through the
// target's storage type by `round` (A -> A); a value that rounds up to `high` becomes low,
// keeping the interval half-open.
template <class A, class Round>
TS_HD inline A uniform_value(double low, double span, double u, A lo, A hi, const Round& round) {
  const A v = round(static_cast<A>(rn_add(low, rn_mul(span, u))));
  return (v >= hi && span > 0) ? lo : v;
}

// ---- float32 Box-Muller with branch-free polynomial log and sincos (Cephes coefficients,
// about 1 ulp on the ranges used here); branch-free so the CPU loop vectorizes.

// mask ? a : b through the bits (mask all ones or zero).
TS_HD inline float select_bits(uint32_t mask, float a, float b) {
  return float_of((bits_of(a) & mask) | (bits_of(b) & ~mask));
}

// ln(x) for normal, finite x > 0.
TS_HD inline float log_f32(float x) {
  const uint32_t bits = bits_of(x);
  const float m = float_of((bits & 0x007fffffu) | 0x3f000000u);  // x = m 2^e, m in [.5, 1)
  const uint32_t low = m < 0.707106781186547524f;
  const int e = static_cast<int>((bits >> 23) & 0xff) - 126 - static_cast<int>(low);
  // ln x = ln(1 + f) + e ln 2
  const float f = select_bits(0u - low, rn_sub(rn_add(m, m), 1.0f), rn_sub(m, 1.0f));
  const float z = rn_mul(f, f);
  float y = 7.0376836292e-2f;
  y = rn_sub(rn_mul(y, f), 1.1514610310e-1f);
  y = rn_add(rn_mul(y, f), 1.1676998740e-1f);
  y = rn_sub(rn_mul(y, f), 1.2420140846e-1f);
  y = rn_add(rn_mul(y, f), 1.4249322787e-1f);
  y = rn_sub(rn_mul(y, f), 1.6668057665e-1f);
  y = rn_add(rn_mul(y, f), 2.0000714765e-1f);
  y = rn_sub(rn_mul(y, f), 2.4999993993e-1f);
  y = rn_add(rn_mul(y, f), 3.3333331174e-1f);
  y = rn_mul(rn_mul(y, f), z);
  const float ef = static_cast<float>(e);
  y = rn_add(y, rn_sub(rn_mul(-2.12194440e-4f, ef), rn_mul(0.5f, z)));
  return rn_add(rn_add(f, y), rn_mul(0.693359375f, ef));
}

// sin(2 pi u) and cos(2 pi u) for u in [0, 1): reduced exactly to phi in [-pi/4, pi/4) plus
// a quarter turn j, then the quadrant picks and signs the two polynomials.
TS_HD inline void sincos_turns_f32(float u, float& sn, float& cs) {
  const float u8 = u * 8.0f;                      // exact
  const int j = (static_cast<int>(u8) + 1) >> 1;  // nearest quarter turn
  const float phi = rn_mul(u8 - static_cast<float>(2 * j), 0.785398163397448310f);  // exact sub
  const float z = rn_mul(phi, phi);
  float s = rn_add(rn_mul(-1.9515295891e-4f, z), 8.3321608736e-3f);
  s = rn_sub(rn_mul(s, z), 1.6666654611e-1f);
  s = rn_add(rn_mul(rn_mul(s, z), phi), phi);
  float c = rn_sub(rn_mul(2.443315711809948e-5f, z), 1.388731625493765e-3f);
  c = rn_add(rn_mul(c, z), 4.166664568298827e-2f);
  c = rn_add(rn_sub(rn_mul(rn_mul(c, z), z), rn_mul(0.5f, z)), 1.0f);
  const uint32_t swap = 0u - static_cast<uint32_t>(j & 1);
  sn = float_of(bits_of(select_bits(swap, c, s)) ^ (static_cast<uint32_t>(j & 2) << 30));
  cs = float_of(bits_of(select_bits(swap, s, c)) ^ (static_cast<uint32_t>((j + 1) & 2) << 30));
}

// Two normals (mean, std) from the uniforms u1 (radius) and u2 (angle), both 24-bit in [0, 1).
TS_HD inline void box_muller_f32(float u1, float u2, float mean, float std, float& z0, float& z1) {
  const float r = rn_sqrt(rn_mul(-2.0f, log_f32(1.0f - u1)));  // 1 - u1 in (0, 1], exact
  float sn, cs;
  sincos_turns_f32(u2, sn, cs);
  z0 = rn_add(mean, rn_mul(std, rn_mul(r, cs)));
  z1 = rn_add(mean, rn_mul(std, rn_mul(r, sn)));
}

// ---- float64 Box-Muller: fdlibm's log and its sin/cos kernels (musl's formulation), with the
// argument reduced in turns like the float32 version.

// ln(x) for normal, finite x > 0 (< 1 ulp).
TS_HD inline double log_f64(double x) {
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
               Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
               Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
               Lg7 = 1.479819860511658591e-01;
  uint64_t ix = bits_of(x);
  uint32_t hx = static_cast<uint32_t>(ix >> 32);
  // Reduce x into [sqrt(2)/2, sqrt(2)): x = 2^k (1 + f).
  hx += 0x3ff00000u - 0x3fe6a09eu;
  const int k = static_cast<int>(hx >> 20) - 0x3ff;
  hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
  ix = (uint64_t{hx} << 32) | (ix & 0xffffffffu);
  const double f = rn_sub(double_of(ix), 1.0);
  const double hfsq = rn_mul(rn_mul(0.5, f), f);
  const double s = rn_div(f, rn_add(2.0, f));
  const double z = rn_mul(s, s), w = rn_mul(z, z);
  const double t1 = rn_mul(w, rn_add(Lg2, rn_mul(w, rn_add(Lg4, rn_mul(w, Lg6)))));
  const double t2 =
      rn_mul(z, rn_add(Lg1, rn_mul(w, rn_add(Lg3, rn_mul(w, rn_add(Lg5, rn_mul(w, Lg7)))))));
  const double R = rn_add(t2, t1), dk = static_cast<double>(k);
  // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, left to right
  double r = rn_add(rn_mul(s, rn_add(hfsq, R)), rn_mul(dk, ln2_lo));
  r = rn_add(rn_sub(r, hfsq), f);
  return rn_add(r, rn_mul(dk, ln2_hi));
}

// sin and cos of x in [-pi/4, pi/4] (fdlibm __kernel_sin / __kernel_cos with a zero tail).
TS_HD inline double kernel_sin_f64(double x) {
  const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
               S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
               S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  const double z = rn_mul(x, x), w = rn_mul(z, z);
  const double r = rn_add(rn_add(S2, rn_mul(z, rn_add(S3, rn_mul(z, S4)))),
                          rn_mul(rn_mul(z, w), rn_add(S5, rn_mul(z, S6))));
  const double v = rn_mul(z, x);
  return rn_add(x, rn_mul(v, rn_add(S1, rn_mul(z, r))));
}
TS_HD inline double kernel_cos_f64(double x) {
  const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
               C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
               C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  const double z = rn_mul(x, x), w = rn_mul(z, z);
  const double r = rn_add(rn_mul(z, rn_add(C1, rn_mul(z, rn_add(C2, rn_mul(z, C3))))),
                          rn_mul(rn_mul(w, w), rn_add(C4, rn_mul(z, rn_add(C5, rn_mul(z, C6))))));
  const double hz = rn_mul(0.5, z), v = rn_sub(1.0, hz);
  return rn_add(v, rn_add(rn_sub(rn_sub(1.0, v), hz), rn_mul(z, r)));
}

// sin(2 pi u) and cos(2 pi u) for a 53-bit u in [0, 1).
TS_HD inline void sincos_turns_f64(double u, double& sn, double& cs) {
  const double u8 = u * 8.0;                      // exact
  const int j = (static_cast<int>(u8) + 1) >> 1;  // nearest quarter turn, 0..4
  const double phi = rn_mul(u8 - static_cast<double>(2 * j), 0.78539816339744830962);
  const double s = kernel_sin_f64(phi), c = kernel_cos_f64(phi);
  const double ss = (j & 1) ? c : s, cc = (j & 1) ? s : c;
  sn = (j & 2) ? -ss : ss;
  cs = ((j + 1) & 2) ? -cc : cc;
}

// Two normals (mean, std) from one Philox block: radius from (w0, w1), angle from (w2, w3).
TS_HD inline void box_muller_f64(const Philox4x32& w, double mean, double std, double& z0,
                                 double& z1) {
  const double r = rn_sqrt(rn_mul(-2.0, log_f64(1.0 - unit53(w[0], w[1]))));  // exact sub
  double sn, cs;
  sincos_turns_f64(unit53(w[2], w[3]), sn, cs);
  z0 = rn_add(mean, rn_mul(std, rn_mul(r, cs)));
  z1 = rn_add(mean, rn_mul(std, rn_mul(r, sn)));
}

// ---- randint: low + (64 random bits mod range); the modulo bias is below range / 2^64.
TS_HD inline int64_t randint_value(int64_t low, uint64_t range, uint32_t hi, uint32_t lo) {
  return static_cast<int64_t>(static_cast<uint64_t>(low) + u64(hi, lo) % range);
}

// ---- dropout: element i keeps its value when word i % 4 of block i / 4 is at least
// threshold = round(p 2^32) (so p = 1 drops everything, p = 0 nothing), and a kept value is
// scaled by 1 / (1 - p) in the compute type.
TS_HD inline bool dropout_keep(uint32_t w, uint64_t threshold) { return uint64_t{w} >= threshold; }

// ---- Note [Attention dropout mask]: the mask of the fused attention kernels (Note [Attention
// dropout] in ops/attention.h). Element (i, j) of matrix n (query i, key j) belongs to the
// group of four {i0, i0 + 8} x {j0, j0 + 8} (i0 = i with bit 3 cleared, j0 likewise): one
// Philox4x32 block per group, whose word ((i >> 3) & 1) * 2 + ((j >> 3) & 1) decides the element
// as dropout_keep does. The group's block is (n * GL + gi) * GS + gj, with gi = (i >> 4) * 8 +
// (i & 7) and GL = ceil(L / 16) * 8 (gj and GS likewise over j and S); the offset and seed are
// the draw's. Why these groups: a thread of the tensor-core kernels holds rows {r, r + 8} and
// column pairs {c, c + 1} (r, c < 8 within a 16-aligned tile) of the scores in the forward and
// the dQ pass, and the same with queries and keys swapped in the dK/dV pass; {i0, i0 + 8} x
// {j0, j0 + 8} is the finest grouping whole in every thread of both orientations, so each
// Philox call (ten rounds) serves four elements instead of one.
TS_HD inline uint64_t attention_drop_groups(uint64_t len) { return (len + 15) / 16 * 8; }
TS_HD inline uint64_t attention_drop_block(uint64_t n, uint64_t i, uint64_t j, uint64_t GL,
                                           uint64_t GS) {
  return (n * GL + ((i >> 4) * 8 + (i & 7))) * GS + ((j >> 4) * 8 + (j & 7));
}
TS_HD inline int attention_drop_word(uint64_t i, uint64_t j) {
  return static_cast<int>(((i >> 3) & 1) * 2 + ((j >> 3) & 1));
}
// Whether query i keeps key j in matrix n of an (N, L, S) attention with dropout (threshold,
// seed, offset): one element's decision, for the CPU kernel and the mask op.
TS_HD inline bool attention_keep_at(uint64_t n, uint64_t i, uint64_t j, uint64_t L, uint64_t S,
                                    uint64_t threshold, uint64_t seed, uint64_t offset) {
  const uint64_t block =
      attention_drop_block(n, i, j, attention_drop_groups(L), attention_drop_groups(S));
  return dropout_keep(philox4x32_10(block, offset, seed)[attention_drop_word(i, j)], threshold);
}

// ---- Note [Graph-safe RNG]: a CUDA graph replays its kernels with the arguments they were
// captured with, so a (seed, offset) passed by value would draw the same numbers at every
// replay. While a graph captures, the generator hands CUDA ops the pair (p, kGraphOffset | k)
// instead: p is the device address of two uint64 words {seed, base offset} that the graph
// rewrites before each replay, and k the op's rank inside the graph. A kernel calls
// resolve_philox once before drawing; it turns the pair into (seed, base + k), so each replay
// continues the generator's stream exactly where eager execution would have (and
// ts.manual_seed reproduces it). Offsets of eager calls never reach 2^63.
constexpr uint64_t kGraphOffset = uint64_t{1} << 63;
#ifdef __CUDACC__
__device__ __forceinline__ void resolve_philox(uint64_t& seed, uint64_t& offset) {
  if (offset & kGraphOffset) {
    const uint64_t* state = reinterpret_cast<const uint64_t*>(seed);
    seed = state[0];
    offset = state[1] + (offset & ~kGraphOffset);
  }
}
#endif

}  // namespace ts::rng
