// The scalar float32 exp and tanh behind fast_math.h's array loops (Note [fast float32
// math]), inline so that other kernels' loops (GELU, ...) vectorize them too.
#pragma once
#include <cstdint>
#include <cstring>

namespace ts::fast {

inline float bits_to_float(uint32_t i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
// 2^e as a float32 from the biased exponent e + 127, shifted in unsigned arithmetic: a NaN
// input makes e INT_MIN / 2 (the cast of NaN), and a left shift of a negative int is UB.
inline float pow2_bits(int32_t e) { return bits_to_float(static_cast<uint32_t>(e + 127) << 23); }

// Round-to-nearest of x / ln2 by the 1.5 * 2^23 trick (no SSE4.1 round needed), and the
// Cody-Waite remainder r = x - n ln2 (ln2 split so n * hi is exact), |r| <= ln2/2.
inline float reduce_ln2(float x, float& r) {
  const float magic = 12582912.0f;
  const float nf = (x * 1.44269504088896341f + magic) - magic;
  r = (x - nf * 0.693359375f) - nf * -2.12194440e-4f;
  return nf;
}

// c[0] r^(N-1) + ... + c[N-1] by Horner's rule (unrolled: N is a constant).
template <int N>
inline float horner(float r, const float (&c)[N]) {
  float p = c[0];
  for (int i = 1; i < N; ++i) p = p * r + c[i];
  return p;
}

inline float exp_f32(float x) {
  // Outside [-104, 89] exp is 0 or inf in float32; NaN passes through both comparisons.
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  float r;
  const float nf = reduce_ln2(xc, r);
  static constexpr float kExp[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                   4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  const float p = horner(r, kExp) * (r * r) + r + 1.0f;
  const int32_t n = static_cast<int32_t>(nf);
  const int32_t n1 = n >> 1, n2 = n - n1;  // a shift, not idiv: vectorizes
  return p * pow2_bits(n1) * pow2_bits(n2);
}

inline float tanh_f32(float x) {
  const float ax = x < 0 ? -x : x;
  // tanh(9) rounds to 1 in float32; the clamp keeps 2^n finite and lets NaN through.
  const float y = 2.0f * (ax > 9.0f ? 9.0f : ax);
  float r;
  const float nf = reduce_ln2(y, r);
  // expm1(r) = r + r^2 P(r), minimax for relative error on |r| <= ln2/2 (0.22 ulp).
  static constexpr float kExpm1[] = {1.3882522471249104e-3f, 8.36651399731636e-3f,
                                     4.166720062494278e-2f, 1.666654348373413e-1f,
                                     4.999999701976776e-1f};
  const float em1r = horner(r, kExpm1) * (r * r) + r;
  const float two_n = pow2_bits(static_cast<int32_t>(nf));
  const float e = two_n * em1r + (two_n - 1.0f);  // expm1(y); 2^n - 1 is exact for n <= 24
  const float t = e / (e + 2.0f);
  // Copy x's sign bit: keeps -0 and makes tanh odd.
  int32_t tb, xb;
  std::memcpy(&tb, &t, 4);
  std::memcpy(&xb, &x, 4);
  return bits_to_float(tb | (xb & INT32_MIN));
}

// expm1 with relative accuracy near 0 by tanh_f32's reduction, 2^n expm1(r) + (2^n - 1);
// above 16 exp - 1 loses nothing. expm1(-18) rounds to -1 in float32, hence the clamp.
inline float expm1_f32(float x) {
  const float xc = x < -18.0f ? -18.0f : x;
  float r;
  const float nf = reduce_ln2(xc > 16.0f ? 16.0f : xc, r);
  static constexpr float kExpm1[] = {1.3882522471249104e-3f, 8.36651399731636e-3f,
                                     4.166720062494278e-2f, 1.666654348373413e-1f,
                                     4.999999701976776e-1f};
  const float em1r = horner(r, kExpm1) * (r * r) + r;
  const float two_n = pow2_bits(static_cast<int32_t>(nf));
  const float small = two_n * em1r + (two_n - 1.0f);
  return x > 16.0f ? exp_f32(x) - 1.0f : small;
}

// log of a positive float32 (Cephes' logf: x = m 2^e with m in [sqrt(1/2), sqrt(2)), a
// degree-9 polynomial in m - 1, about 1 ulp); +inf and NaN pass through.
inline float log_f32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  int32_t e = static_cast<int32_t>(b >> 23) - 126;
  const float m = bits_to_float((b & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  const float f = low ? m + m - 1.0f : m - 1.0f;
  const float z = f * f;
  static constexpr float kLog[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                                   -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                                   2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
  const float fe = static_cast<float>(e);
  const float y = horner(f, kLog) * f * z + -2.12194440e-4f * fe + -0.5f * z;
  const float r = f + y + 0.693359375f * fe;
  return (x != x || x > 3.4e38f) ? x : r;
}

// log1p for z >= 0 (and NaN, +inf): log(1 + z) corrected for the rounding of 1 + z
// (Goldberg's z / ((1 + z) - 1) factor), exact for z below half an ulp of 1.
inline float log1p_f32(float z) {
  const float u = 1.0f + z;
  const float d = u - 1.0f;
  const float r = d == 0.0f ? z : log_f32(u) * (z / d);
  return u > 3.4e38f ? u : r;
}

}  // namespace ts::fast
