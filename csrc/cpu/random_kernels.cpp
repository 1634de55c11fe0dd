// CPU kernels of the random ops: each element's value is a function of (seed, offset, its
// index) only (Note [Counter-based RNG] in ops/random.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/parallel.h"
#include "ops/random.h"

namespace ts {
namespace {

constexpr int64_t kRandomGrain = 16384;
constexpr double kTwoPi = 6.283185307179586476925286766559;

inline uint64_t u64(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }

// Fills out[0, n) block by block: f(words, vals) writes the PerBlock values of one Philox
// block, and element i is value i % PerBlock of block i / PerBlock. A chunk that starts or
// ends mid-block generates that block whole and copies the part it owns.
template <int PerBlock, class T, class F>
void fill_blocks(T* out, int64_t n, uint64_t seed, uint64_t offset, const F& f) {
  parallel_for(0, n, kRandomGrain, [&](int64_t b, int64_t e) {
    T tmp[PerBlock];
    for (int64_t i = b; i < e;) {
      const int64_t j = i % PerBlock;
      const auto w = philox4x32_10(static_cast<uint64_t>(i / PerBlock), offset, seed);
      if (j == 0 && i + PerBlock <= e) {
        f(w, out + i);
        i += PerBlock;
        continue;
      }
      f(w, tmp);
      for (int64_t k = j; k < PerBlock && i < e; ++k, ++i) out[i] = tmp[k];
    }
  });
}

// Uniform in [0, 1) with as many random bits as T's significand holds, so the value is exact
// in T and never rounds up to 1.
template <class T>
double unit(uint32_t w0, uint32_t w1) {
  if constexpr (std::is_same_v<T, double>)
    return (u64(w0, w1) >> 11) * 0x1p-53;
  else if constexpr (std::is_same_v<T, float>)
    return (w0 >> 8) * 0x1p-24;
  else if constexpr (std::is_same_v<T, Half>)
    return (w0 >> 21) * 0x1p-11;
  else
    return (w0 >> 24) * 0x1p-8;  // BFloat16
}

template <class T>
void fill_uniform(T* out, int64_t n, double low, double high, uint64_t seed, uint64_t offset) {
  const double span = high - low;
  const T hi(static_cast<acc_t<T>>(high)), lo(static_cast<acc_t<T>>(low));
  const auto conv = [&](double u) {
    const T v(static_cast<acc_t<T>>(low + span * u));
    // Rounding to T can reach `high`; keep the interval half-open.
    return (static_cast<acc_t<T>>(v) >= static_cast<acc_t<T>>(hi) && span > 0) ? lo : v;
  };
  if constexpr (std::is_same_v<T, double>) {
    fill_blocks<2>(out, n, seed, offset, [&](const auto& w, T* v) {
      v[0] = conv(unit<T>(w[0], w[1]));
      v[1] = conv(unit<T>(w[2], w[3]));
    });
  } else if (low == 0 && high == 1) {  // the common case: the unit value is exact in T
    fill_blocks<4>(out, n, seed, offset, [&](const auto& w, T* v) {
      for (int j = 0; j < 4; ++j) v[j] = T(static_cast<acc_t<T>>(unit<T>(w[j], 0)));
    });
  } else {
    fill_blocks<4>(out, n, seed, offset, [&](const auto& w, T* v) {
      for (int j = 0; j < 4; ++j) v[j] = conv(unit<T>(w[j], 0));
    });
  }
}

// ---- float32 Box-Muller with branch-free polynomial log and sincos (Cephes coefficients,
// about 1 ulp on the ranges used here) so the group loop below vectorizes; libm's scalar
// logf/sinf/cosf made randn 2-3x slower than PyTorch.
inline float bits_as_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// mask ? a : b with bit operations (mask all ones or zero), so loops stay branch-free.
inline float select_bits(uint32_t mask, float a, float b) {
  return bits_as_float((float_bits(a) & mask) | (float_bits(b) & ~mask));
}

// ln(x) for normal, finite x > 0.
inline float log_f32(float x) {
  const uint32_t bits = float_bits(x);
  const float m = bits_as_float((bits & 0x007fffffu) | 0x3f000000u);  // x = m 2^e, m in [.5, 1)
  const uint32_t low = m < 0.707106781186547524f;
  const int e = static_cast<int>((bits >> 23) & 0xff) - 126 - static_cast<int>(low);
  const float f = select_bits(0u - low, m + m - 1.0f, m - 1.0f);  // ln x = ln(1 + f) + e ln 2
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  const float ef = static_cast<float>(e);
  y += -2.12194440e-4f * ef - 0.5f * z;
  return f + y + 0.693359375f * ef;
}

// sin(2 pi u) and cos(2 pi u) for u in [0, 1): reduced exactly to phi in [-pi/4, pi/4) plus
// a quarter turn j, then the quadrant picks and signs the two polynomials.
inline void sincos_turns(float u, float& sn, float& cs) {
  const float u8 = u * 8.0f;                      // exact
  const int j = (static_cast<int>(u8) + 1) >> 1;  // nearest quarter turn
  const float phi = (u8 - static_cast<float>(2 * j)) * 0.785398163397448310f;
  const float z = phi * phi;
  const float s =
      ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * phi + phi;
  const float c =
      ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z -
      0.5f * z + 1.0f;
  const uint32_t swap = 0u - static_cast<uint32_t>(j & 1);
  sn = bits_as_float(float_bits(select_bits(swap, c, s)) ^ (static_cast<uint32_t>(j & 2) << 30));
  cs = bits_as_float(float_bits(select_bits(swap, s, c)) ^
                     (static_cast<uint32_t>((j + 1) & 2) << 30));
}

// Normals for float32/float16/bfloat16 out: groups of Philox blocks -> uniforms -> one
// vectorizable Box-Muller loop -> the owned part copied out. Element i is value i % 4 of
// block i / 4 (values 0, 1: cos and sin of the pair (w0, w1); 2, 3: of (w2, w3)).
template <class T>
void fill_normal_f32(T* out, int64_t n, float mean, float std, uint64_t seed, uint64_t offset) {
  constexpr int kBlocks = 64, kPairs = 2 * kBlocks;
  parallel_for(0, n, kRandomGrain, [&](int64_t b, int64_t e) {
    float u1[kPairs], u2[kPairs], z[2 * kPairs];
    for (int64_t i = b; i < e;) {
      const int64_t blk0 = i / 4, skip = i % 4;
      for (int g = 0; g < kBlocks; ++g) {
        const auto w = philox4x32_10(static_cast<uint64_t>(blk0 + g), offset, seed);
        u1[2 * g] = (w[0] >> 8) * 0x1p-24f;
        u2[2 * g] = (w[1] >> 8) * 0x1p-24f;
        u1[2 * g + 1] = (w[2] >> 8) * 0x1p-24f;
        u2[2 * g + 1] = (w[3] >> 8) * 0x1p-24f;
      }
      for (int p = 0; p < kPairs; ++p) {
        const float r = std::sqrt(-2.0f * log_f32(1.0f - u1[p]));  // 1 - u1 in (0, 1]
        float sn, cs;
        sincos_turns(u2[p], sn, cs);
        z[2 * p] = mean + std * (r * cs);
        z[2 * p + 1] = mean + std * (r * sn);
      }
      const int64_t take = std::min<int64_t>(2 * kPairs - skip, e - i);
      for (int64_t k = 0; k < take; ++k) out[i + k] = T(z[skip + k]);
      i += take;
    }
  });
}

// float64: libm's double log/sin/cos on 53-bit uniforms, two normals per Philox block.
void fill_normal_f64(double* out, int64_t n, double mean, double std, uint64_t seed,
                     uint64_t offset) {
  fill_blocks<2>(out, n, seed, offset, [&](const auto& w, double* v) {
    const double r = std::sqrt(-2.0 * std::log(1.0 - unit<double>(w[0], w[1])));
    const double t = kTwoPi * unit<double>(w[2], w[3]);
    v[0] = mean + std * (r * std::cos(t));
    v[1] = mean + std * (r * std::sin(t));
  });
}

void cpu_random_fill(const Tensor& out, RandomDist dist, double a, double b, uint64_t seed,
                     uint64_t offset) {
  visit_dtype<kFloatSet>(out.dtype(), "random", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (dist == RandomDist::Uniform)
      fill_uniform<T>(out.data<T>(), out.numel(), a, b, seed, offset);
    else if constexpr (std::is_same_v<T, double>)
      fill_normal_f64(out.data<T>(), out.numel(), a, b, seed, offset);
    else
      fill_normal_f32<T>(out.data<T>(), out.numel(), static_cast<float>(a), static_cast<float>(b),
                         seed, offset);
  });
}

// low + (64 random bits mod range): the modulo bias is below range / 2^64.
void cpu_randint(const Tensor& out, int64_t low, uint64_t range, uint64_t seed, uint64_t offset) {
  visit_dtype<kIntSet | kFloatSet>(out.dtype(), "randint", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto conv = [&](uint32_t hi, uint32_t lo) {
      const auto v = static_cast<int64_t>(static_cast<uint64_t>(low) + u64(hi, lo) % range);
      if constexpr (std::is_integral_v<T>)
        return static_cast<T>(v);
      else
        return T(static_cast<acc_t<T>>(v));
    };
    fill_blocks<2>(out.data<T>(), out.numel(), seed, offset, [&](const auto& w, T* v) {
      v[0] = conv(w[0], w[1]);
      v[1] = conv(w[2], w[3]);
    });
  });
}

// Fisher-Yates; step i draws from block i, so the result is a function of (seed, offset, n).
void cpu_randperm(const Tensor& out, uint64_t seed, uint64_t offset) {
  int64_t* p = out.data<int64_t>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    const auto w = philox4x32_10(static_cast<uint64_t>(i), offset, seed);
    const int64_t j = static_cast<int64_t>(u64(w[0], w[1]) % static_cast<uint64_t>(i + 1));
    std::swap(p[i], p[j]);
  }
}

// With replacement: inverse CDF by binary search. Without: the exponential race (keys
// E_i / p_i, E_i ~ Exp(1); the k smallest keys are a weighted sample without replacement).
void cpu_multinomial(const Tensor& probs, const Tensor& out, bool replacement, uint64_t seed,
                     uint64_t offset) {
  const int64_t rows = probs.dim(0), n = probs.dim(1), k = out.dim(1);
  const double* pp = probs.data<double>();
  int64_t* o = out.data<int64_t>();
  parallel_for(0, rows, 1, [&](int64_t r0, int64_t r1) {
    std::vector<double> acc(n);
    std::vector<int64_t> idx(n);
    for (int64_t r = r0; r < r1; ++r) {
      const double* p = pp + r * n;
      if (replacement) {
        double total = 0;
        for (int64_t i = 0; i < n; ++i) acc[i] = total += p[i];
        for (int64_t s = 0; s < k; ++s) {
          const auto w = philox4x32_10(static_cast<uint64_t>(r * k + s), offset, seed);
          const double u = unit<double>(w[0], w[1]) * total;
          int64_t c = std::upper_bound(acc.begin(), acc.end(), u) - acc.begin();
          while (c >= n || p[c] == 0) --c;  // never land on a zero-probability category
          o[r * k + s] = c;
        }
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const auto w = philox4x32_10(static_cast<uint64_t>(r * n + i), offset, seed);
          acc[i] = p[i] > 0 ? -std::log1p(-unit<double>(w[0], w[1])) / p[i]
                            : std::numeric_limits<double>::infinity();
          idx[i] = i;
        }
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
          return acc[a] < acc[b] || (acc[a] == acc[b] && a < b);
        });
        std::copy(idx.begin(), idx.begin() + k, o + r * k);
      }
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(random_fill_stub, CPU, &cpu_random_fill);
TS_REGISTER_KERNEL(randint_stub, CPU, &cpu_randint);
TS_REGISTER_KERNEL(randperm_stub, CPU, &cpu_randperm);
TS_REGISTER_KERNEL(multinomial_stub, CPU, &cpu_multinomial);

}  // namespace ts
