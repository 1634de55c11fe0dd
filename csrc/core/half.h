// float16 and bfloat16 storage types: stored natively, computed in float32, rounded to nearest
// even.
#pragma once
#include <cstdint>
#include <cstring>

namespace ts {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = f32_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Subnormal half: adding 0.5f aligns the mantissa so the FPU rounds (to nearest even) for us.
    const float t = bits_f32(x) + 0.5f;
    return static_cast<uint16_t>(sign | (f32_bits(t) - 0x3f000000u));
  }
  const uint32_t odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // rebias exponent 127 -> 15 and round to nearest even
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-08f;  // 2^-24
    return bits_f32(sign | f32_bits(v));
  }
  if (exp == 31) return bits_f32(sign | 0x7f800000u | (mant << 13));
  return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16_bits_to_float(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(float_to_half_bits(f)) {}
  operator float() const { return half_bits_to_float(x); }
  static Half from_bits(uint16_t b) {
    Half h;
    h.x = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(float_to_bf16_bits(f)) {}
  operator float() const { return bf16_bits_to_float(x); }
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.x = b;
    return h;
  }
};

}  // namespace ts
