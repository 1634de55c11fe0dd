// CPU kernels of the random ops: each element's value is a function of (seed, offset, its
// index) only (Note [Counter-based RNG] in ops/random.h).
#include <algorithm>
#include <cmath>
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

// Box-Muller: each pair of uniforms (u1, u2) gives two normals, r cos(t) and r sin(t).
template <class T>
void fill_normal(T* out, int64_t n, double mean, double std, uint64_t seed, uint64_t offset) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const A m = static_cast<A>(mean), s = static_cast<A>(std);
  const auto box_muller = [&](double u1, double u2, T* v) {
    const A r = std::sqrt(A(-2) * std::log(A(1 - u1)));  // 1 - u1 in (0, 1]: log is finite
    const A t = static_cast<A>(kTwoPi * u2);
    v[0] = T(static_cast<acc_t<T>>(m + s * (r * std::cos(t))));
    v[1] = T(static_cast<acc_t<T>>(m + s * (r * std::sin(t))));
  };
  if constexpr (std::is_same_v<T, double>)
    fill_blocks<2>(out, n, seed, offset, [&](const auto& w, T* v) {
      box_muller(unit<T>(w[0], w[1]), unit<T>(w[2], w[3]), v);
    });
  else
    fill_blocks<4>(out, n, seed, offset, [&](const auto& w, T* v) {
      box_muller(unit<float>(w[0], 0), unit<float>(w[1], 0), v);
      box_muller(unit<float>(w[2], 0), unit<float>(w[3], 0), v + 2);
    });
}

void cpu_random_fill(const Tensor& out, RandomDist dist, double a, double b, uint64_t seed,
                     uint64_t offset) {
  visit_dtype<kFloatSet>(out.dtype(), "random", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (dist == RandomDist::Uniform)
      fill_uniform<T>(out.data<T>(), out.numel(), a, b, seed, offset);
    else
      fill_normal<T>(out.data<T>(), out.numel(), a, b, seed, offset);
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
