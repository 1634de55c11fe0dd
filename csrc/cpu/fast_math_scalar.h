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

}  // namespace ts::fast
