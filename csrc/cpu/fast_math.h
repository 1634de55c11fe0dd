// Branch-free float32 exp and tanh that GCC vectorizes (libm's expf/tanhf are opaque calls).
// Note [fast float32 math]: exp uses Cephes' reduction x = n ln2 + r, |r| <= ln2/2, a degree-7
// polynomial and a two-step 2^n scale so subnormal results round once; tanh uses an odd
// polynomial below 0.625 (fitted for relative error) and 1 - 2/(exp(2|x|)+1) above. Both are
// within 2 ulp of the correctly rounded result (tests/test_elementwise.py measures against
// float64 NumPy) and follow the standard's special cases (NaN, +-inf, signed zeros).
#pragma once
#include <cstdint>
#include <cstring>

namespace ts::fast {

// `static`: each file gets its own copy, compiled with that file's flags. fast_math.cpp
// builds its vectorized loops with no-trapping-math; a shared (ODR-merged) copy under LTO
// could be one built without it, which GCC then refuses to inline or vectorize.

static inline float bits_to_float(int32_t i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}

static inline float exp_f32(float x) {
  // Outside [-104, 89] exp is 0 or inf in float32; NaN passes through both comparisons.
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 89.0f ? 89.0f : xc;
  // Round-to-nearest of x / ln2 by the 1.5 * 2^23 trick (no SSE4.1 round needed).
  const float magic = 12582912.0f;
  const float nf = (xc * 1.44269504088896341f + magic) - magic;
  const float r = (xc - nf * 0.693359375f) - nf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const int32_t n = static_cast<int32_t>(nf);
  const int32_t n1 = n >> 1, n2 = n - n1;  // a shift, not idiv: vectorizes
  return p * bits_to_float((n1 + 127) << 23) * bits_to_float((n2 + 127) << 23);
}

static inline float tanh_f32(float x) {
  const float ax = x < 0 ? -x : x;
  // Small |x|: x + x^3 P(x^2).
  const float t = x * x;
  float p = -5.718891508877277e-3f;
  p = p * t + 2.065306343138218e-2f;
  p = p * t + -5.3744640201330185e-2f;
  p = p * t + 1.3331513106822968e-1f;
  p = p * t + -3.333328664302826e-1f;
  const float small = ax == 0.0f ? x : x + x * t * p;  // x + (+0) would lose -0's sign
  // Large |x|: 1 - 2 / (exp(2|x|) + 1), saturating to 1 (NaN stays NaN).
  const float e = exp_f32(2.0f * (ax > 20.0f ? 20.0f : ax));
  const float big = 1.0f - 2.0f / (e + 1.0f);
  const float sbig = x < 0 ? -big : big;
  return ax < 0.625f ? small : sbig;
}

// Contiguous array forms, compiled for AVX-512F, AVX2 and baseline x86-64 (runtime dispatch).
void exp_f32_array(float* out, const float* in, int64_t n);
void tanh_f32_array(float* out, const float* in, int64_t n);

}  // namespace ts::fast
