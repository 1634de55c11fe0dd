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
using rng::u64;

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

// Uniform in [0, 1) exact in T (ops/random_math.h): 53 bits for double, else the bits T's
// significand holds.
template <class T>
double unit(uint32_t w0, uint32_t w1) {
  if constexpr (std::is_same_v<T, double>)
    return rng::unit53(w0, w1);
  else if constexpr (std::is_same_v<T, float>)
    return rng::unit_bits<24>(w0);
  else if constexpr (std::is_same_v<T, Half>)
    return rng::unit_bits<11>(w0);
  else
    return rng::unit_bits<8>(w0);  // BFloat16
}

template <class T>
void fill_uniform(T* out, int64_t n, double low, double high, uint64_t seed, uint64_t offset) {
  const double span = high - low;
  const T hi(static_cast<acc_t<T>>(high)), lo(static_cast<acc_t<T>>(low));
  using A = acc_t<T>;
  const auto round = [](A a) { return static_cast<A>(T(a)); };
  const auto conv = [&](double u) {
    return T(rng::uniform_value<A>(low, span, u, static_cast<A>(lo), static_cast<A>(hi), round));
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
        u1[2 * g] = rng::unit_bits<24>(w[0]);
        u2[2 * g] = rng::unit_bits<24>(w[1]);
        u1[2 * g + 1] = rng::unit_bits<24>(w[2]);
        u2[2 * g + 1] = rng::unit_bits<24>(w[3]);
      }
      for (int p = 0; p < kPairs; ++p)  // vectorizes: box_muller_f32 is branch-free
        rng::box_muller_f32(u1[p], u2[p], mean, std, z[2 * p], z[2 * p + 1]);
      const int64_t take = std::min<int64_t>(2 * kPairs - skip, e - i);
      for (int64_t k = 0; k < take; ++k) out[i + k] = T(z[skip + k]);
      i += take;
    }
  });
}

// float64: two normals per Philox block, with our own log/sincos (not libm's, so a CUDA
// kernel can match them: Note [Bit-identical random numbers]).
void fill_normal_f64(double* out, int64_t n, double mean, double std, uint64_t seed,
                     uint64_t offset) {
  fill_blocks<2>(out, n, seed, offset,
                 [&](const auto& w, double* v) { rng::box_muller_f64(w, mean, std, v[0], v[1]); });
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

// Four elements per Philox block, one word each (ops/random_math.h).
void cpu_dropout(const Tensor& x, const Tensor& y, const Tensor& mask, uint64_t threshold,
                 double scale, uint64_t seed, uint64_t offset) {
  visit_dtype<kFloatSet>(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    bool* mp = mask.data<bool>();
    const A s = static_cast<A>(scale);
    const int64_t n = x.numel();
    parallel_for(0, (n + 3) / 4, kRandomGrain / 4, [&](int64_t b, int64_t e) {
      for (int64_t blk = b; blk < e; ++blk) {
        const auto w = philox4x32_10(static_cast<uint64_t>(blk), offset, seed);
        for (int64_t j = 0, i = 4 * blk; j < 4 && i < n; ++j, ++i) {
          const bool keep = rng::dropout_keep(w[j], threshold);
          mp[i] = keep;
          yp[i] = keep ? T(static_cast<A>(static_cast<A>(xp[i]) * s)) : T(A(0));
        }
      }
    });
  });
}

// low + (64 random bits mod range): the modulo bias is below range / 2^64.
void cpu_randint(const Tensor& out, int64_t low, uint64_t range, uint64_t seed, uint64_t offset) {
  visit_dtype<kIntSet | kFloatSet>(out.dtype(), "randint", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto conv = [&](uint32_t hi, uint32_t lo) {
      const int64_t v = rng::randint_value(low, range, hi, lo);
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
TS_REGISTER_KERNEL(dropout_stub, CPU, &cpu_dropout);
TS_REGISTER_KERNEL(randint_stub, CPU, &cpu_randint);
TS_REGISTER_KERNEL(randperm_stub, CPU, &cpu_randperm);
TS_REGISTER_KERNEL(multinomial_stub, CPU, &cpu_multinomial);

}  // namespace ts
