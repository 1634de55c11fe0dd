// CPU kernels of the random ops: each element's value is a function of (seed, offset, its
// index) only (Note [Counter-based RNG] in ops/random.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ops/random.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

constexpr int64_t kRandomGrain = 16384;
using rng::u64;

// Philox blocks generated together (the words of block blk0 + g at w[4g .. 4g + 3]).
constexpr int kGroup = 64;

// rng::philox4x32_10 for kGroup consecutive blocks, lane-wise (structure of arrays) so the
// compiler vectorizes each round across blocks: the same rounds, about twice as fast as one
// block at a time.
inline void philox_group(uint64_t blk0, uint64_t offset, uint64_t seed, uint32_t* w) {
  uint32_t c0[kGroup], c1[kGroup], c2[kGroup], c3[kGroup];
  for (int g = 0; g < kGroup; ++g) {
    const uint64_t b = blk0 + static_cast<uint64_t>(g);
    c0[g] = static_cast<uint32_t>(b);
    c1[g] = static_cast<uint32_t>(b >> 32);
    c2[g] = static_cast<uint32_t>(offset);
    c3[g] = static_cast<uint32_t>(offset >> 32);
  }
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    for (int g = 0; g < kGroup; ++g) rng::philox_round(c0[g], c1[g], c2[g], c3[g], k0, k1);
    k0 += rng::kPhiloxBump0;
    k1 += rng::kPhiloxBump1;
  }
  for (int g = 0; g < kGroup; ++g) {
    w[4 * g] = c0[g];
    w[4 * g + 1] = c1[g];
    w[4 * g + 2] = c2[g];
    w[4 * g + 3] = c3[g];
  }
}

// Fills out[0, n) block by block: f(words, vals) writes the PerBlock values of one Philox
// block, and element i is value i % PerBlock of block i / PerBlock. Threads take whole groups
// of blocks, so no value depends on the chunking.
template <int PerBlock, class T, class F>
void fill_blocks(T* out, int64_t n, uint64_t seed, uint64_t offset, const F& f) {
  const int64_t nblocks = (n + PerBlock - 1) / PerBlock;
  const auto run = [&](int64_t gb, int64_t ge) {
    uint32_t w[4 * kGroup];
    T tmp[PerBlock];
    for (int64_t grp = gb; grp < ge; ++grp) {
      const int64_t blk0 = grp * kGroup, cnt = std::min<int64_t>(kGroup, nblocks - blk0);
      philox_group(static_cast<uint64_t>(blk0), offset, seed, w);
      for (int64_t k = 0; k < cnt; ++k) {
        const rng::Philox4x32 q{{w[4 * k], w[4 * k + 1], w[4 * k + 2], w[4 * k + 3]}};
        const int64_t i = (blk0 + k) * PerBlock;
        if (i + PerBlock <= n) {
          f(q, out + i);
          continue;
        }
        f(q, tmp);  // the last, partial block
        for (int64_t j = 0; i + j < n; ++j) out[i + j] = tmp[j];
      }
    }
  };
  parallel_for(0, (nblocks + kGroup - 1) / kGroup,
               std::max<int64_t>(1, kRandomGrain / (kGroup * PerBlock)), run);
}

// Uniform in [0, 1) exact in T (kernels/random_math.h): 53 bits for double, else the bits T's
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
  constexpr int kPairs = 2 * kGroup;
  parallel_for(0, n, kRandomGrain, [&](int64_t b, int64_t e) {
    uint32_t w[4 * kGroup];
    float u1[kPairs], u2[kPairs], z[2 * kPairs];
    for (int64_t i = b; i < e;) {
      const int64_t blk0 = i / 4, skip = i % 4;
      philox_group(static_cast<uint64_t>(blk0), offset, seed, w);
      for (int p = 0; p < kPairs; ++p) {  // pair p: words 2p (radius) and 2p + 1 (angle)
        u1[p] = rng::unit_bits<24>(w[2 * p]);
        u2[p] = rng::unit_bits<24>(w[2 * p + 1]);
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

// v where keep is 1, +0 where it is 0, through the bits (a select the compiler vectorizes).
template <class A>
A keep_or_zero(A v, uint32_t keep) {
  using U = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
  U b;
  std::memcpy(&b, &v, sizeof b);
  b &= U(0) - static_cast<U>(keep);
  std::memcpy(&v, &b, sizeof b);
  return v;
}

// Four elements per Philox block, one word each (kernels/random_math.h): a group's words first,
// then a branch-free loop over its elements that the compiler vectorizes (for float32/64).
void cpu_dropout(const Tensor& x, const Tensor& y, const Tensor& mask, uint64_t threshold,
                 double scale, uint64_t seed, uint64_t offset) {
  // rng::dropout_keep(w, threshold) in 32 bits: nothing is kept for threshold 2^32 (p = 1),
  // and w >= threshold is a signed compare of both sides offset by 2^31 (SSE2 has no unsigned
  // one).
  const uint32_t any = threshold <= UINT32_MAX;
  const int32_t t_signed = static_cast<int32_t>(static_cast<uint32_t>(threshold) ^ 0x80000000u);
  visit_dtype<kFloatSet>(x.dtype(), "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    constexpr int64_t kElems = 4 * kGroup;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    uint8_t* mp = reinterpret_cast<uint8_t*>(mask.data<bool>());  // 0/1: vectorizable stores
    const A s = static_cast<A>(scale);
    const int64_t n = x.numel();
    const auto run = [&](int64_t b, int64_t e) {
      uint32_t w[kElems];
      for (int64_t grp = b; grp < e; ++grp) {
        const int64_t i0 = grp * kElems, len = std::min(kElems, n - i0);
        philox_group(static_cast<uint64_t>(grp * kGroup), offset, seed, w);
        for (int64_t j = 0; j < len; ++j) {
          const uint32_t keep =
              static_cast<uint32_t>(static_cast<int32_t>(w[j] ^ 0x80000000u) >= t_signed) & any;
          mp[i0 + j] = static_cast<uint8_t>(keep);
          const A v = static_cast<A>(xp[i0 + j]) * s;
          yp[i0 + j] = T(keep_or_zero(v, keep));
        }
      }
    };
    parallel_for(0, (n + kElems - 1) / kElems, std::max<int64_t>(1, kRandomGrain / kElems), run);
  });
}

void cpu_dropout_backward(const Tensor& g, const Tensor& mask, const Tensor& out, double scale) {
  visit_dtype<kFloatSet>(g.dtype(), "dropout_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = acc_t<T>;
    const T* gp = g.data<T>();
    const uint8_t* mp = reinterpret_cast<const uint8_t*>(mask.data<bool>());
    T* op = out.data<T>();
    const A s = static_cast<A>(scale);
    parallel_for(0, g.numel(), kRandomGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        op[i] = T(keep_or_zero(static_cast<A>(gp[i]) * s, static_cast<uint32_t>(mp[i])));
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
TS_REGISTER_KERNEL(dropout_backward_stub, CPU, &cpu_dropout_backward);
TS_REGISTER_KERNEL(randint_stub, CPU, &cpu_randint);
TS_REGISTER_KERNEL(randperm_stub, CPU, &cpu_randperm);
TS_REGISTER_KERNEL(multinomial_stub, CPU, &cpu_multinomial);

}  // namespace ts
