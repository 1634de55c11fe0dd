// CUDA kernels of the random ops (ops/random.h): uniform/normal fills, randint and fused
// dropout. Each thread turns whole Philox blocks into values with the CPU kernels' arithmetic
// (kernels/random_math.h, Note [Bit-identical random numbers]), so a CUDA tensor holds exactly the
// numbers the CPU would draw for the same seed and offset, with no host round trip.
#include <algorithm>
#include <type_traits>

#include "core/half.h"
#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/random.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

// One thread per Philox block (grid-stride): gen(w, v) writes the block's K values; element i
// is value i % K of block i / K, as on the CPU (cpu/random_kernels.cpp fill_blocks).
template <class D, class Gen>
__global__ void __launch_bounds__(kBlock)
    philox_fill_kernel(D* out, int64_t n, uint64_t seed, uint64_t offset, Gen gen) {
  rng::resolve_philox(seed, offset);  // Note [Graph-safe RNG]
  constexpr int K = Gen::kPerBlock;
  const int64_t nblocks = (n + K - 1) / K;
  for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < nblocks;
       blk += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const rng::Philox4x32 w = rng::philox4x32_10(static_cast<uint64_t>(blk), offset, seed);
    D v[K];
    gen(w, v);
    const int64_t i0 = blk * K;
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (i0 + j < n) out[i0 + j] = v[j];
  }
}

template <class Gen>
unsigned grid_for(int64_t n, int dev) {
  const int64_t nblocks = (n + Gen::kPerBlock - 1) / Gen::kPerBlock;
  const int64_t grid = (nblocks + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(grid, sm_count(dev) * 16)));
}

template <class D, class Gen>
void launch_fill(const Tensor& out, uint64_t seed, uint64_t offset, const Gen& gen) {
  const int dev = out.device().index;
  philox_fill_kernel<D, Gen><<<grid_for<Gen>(out.numel(), dev), kBlock, 0, current_stream(dev)>>>(
      reinterpret_cast<D*>(out.data_ptr()), out.numel(), seed, offset, gen);
  TS_CUDA_CHECK_LAUNCH();
}

// The significand bits of a uniform in D (the CPU's unit<T>).
template <class D>
constexpr int unit_bits_of() {
  if constexpr (std::is_same_v<D, __half>)
    return 11;
  else if constexpr (std::is_same_v<D, __nv_bfloat16>)
    return 8;
  else
    return 24;
}

// A -> A through the storage type D (rounds like the CPU's T(a)).
template <class D>
struct RoundThrough {
  __device__ dacc_t<D> operator()(dacc_t<D> a) const { return dconvert<dacc_t<D>>(dconvert<D>(a)); }
};

// Uniform [0, 1) for a 16/32-bit float: the unit value itself (exact in D).
template <class D>
struct UnitGen {
  static constexpr int kPerBlock = 4;
  __device__ void operator()(const rng::Philox4x32& w, D* v) const {
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = dconvert<D>(rng::unit_bits<unit_bits_of<D>()>(w[j]));
  }
};

// Uniform [low, high) for a 16/32-bit float (4 per block) or float64 (2 per block).
template <class D>
struct UniformGen {
  static constexpr bool kF64 = std::is_same_v<D, double>;
  static constexpr int kPerBlock = kF64 ? 2 : 4;
  using A = dacc_t<D>;
  double low, span;
  A lo, hi;  // low and high rounded through D, as the CPU computes them
  __device__ void operator()(const rng::Philox4x32& w, D* v) const {
    if constexpr (kF64) {
      v[0] = rng::uniform_value<A>(low, span, rng::unit53(w[0], w[1]), lo, hi, RoundThrough<D>{});
      v[1] = rng::uniform_value<A>(low, span, rng::unit53(w[2], w[3]), lo, hi, RoundThrough<D>{});
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[j] = dconvert<D>(rng::uniform_value<A>(
            low, span, static_cast<double>(rng::unit_bits<unit_bits_of<D>()>(w[j])), lo, hi,
            RoundThrough<D>{}));
    }
  }
};

// Normals for 16/32-bit floats: 4 per block (cos and sin of the pairs (w0, w1), (w2, w3)).
template <class D>
struct NormalF32Gen {
  static constexpr int kPerBlock = 4;
  float mean, std;
  __device__ void operator()(const rng::Philox4x32& w, D* v) const {
    float z[4];
    rng::box_muller_f32(rng::unit_bits<24>(w[0]), rng::unit_bits<24>(w[1]), mean, std, z[0], z[1]);
    rng::box_muller_f32(rng::unit_bits<24>(w[2]), rng::unit_bits<24>(w[3]), mean, std, z[2], z[3]);
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = dconvert<D>(z[j]);
  }
};

struct NormalF64Gen {
  static constexpr int kPerBlock = 2;
  double mean, std;
  __device__ void operator()(const rng::Philox4x32& w, double* v) const {
    rng::box_muller_f64(w, mean, std, v[0], v[1]);
  }
};

template <class D>
struct RandintGen {
  static constexpr int kPerBlock = 2;
  int64_t low;
  uint64_t range;
  __device__ D conv(int64_t v) const {
    if constexpr (std::is_integral_v<D>)
      return static_cast<D>(v);
    else
      return dconvert<D>(static_cast<dacc_t<D>>(v));
  }
  __device__ void operator()(const rng::Philox4x32& w, D* v) const {
    v[0] = conv(rng::randint_value(low, range, w[0], w[1]));
    v[1] = conv(rng::randint_value(low, range, w[2], w[3]));
  }
};

// The host storage type matching a device one (to round low/high exactly as the CPU does).
template <class D>
using host_t =
    std::conditional_t<std::is_same_v<D, __half>, Half,
                       std::conditional_t<std::is_same_v<D, __nv_bfloat16>, BFloat16, D>>;

void cuda_random_fill(const Tensor& out, RandomDist dist, double a, double b, uint64_t seed,
                      uint64_t offset) {
  cuda_visit<kFloatSet>(out.dtype(), "random", [&](auto tag) {
    using D = typename decltype(tag)::type;
    using A = dacc_t<D>;
    using H = host_t<D>;
    if (dist == RandomDist::Normal) {
      if constexpr (std::is_same_v<D, double>)
        launch_fill<D>(out, seed, offset, NormalF64Gen{a, b});
      else
        launch_fill<D>(out, seed, offset,
                       NormalF32Gen<D>{static_cast<float>(a), static_cast<float>(b)});
    } else if (!std::is_same_v<D, double> && a == 0 && b == 1) {
      launch_fill<D>(out, seed, offset, UnitGen<D>{});
    } else {
      const A lo = static_cast<A>(H(static_cast<A>(a))), hi = static_cast<A>(H(static_cast<A>(b)));
      launch_fill<D>(out, seed, offset, UniformGen<D>{a, b - a, lo, hi});
    }
  });
}

void cuda_randint(const Tensor& out, int64_t low, uint64_t range, uint64_t seed, uint64_t offset) {
  cuda_visit<kIntSet | kFloatSet>(out.dtype(), "randint", [&](auto tag) {
    using D = typename decltype(tag)::type;
    launch_fill<D>(out, seed, offset, RandintGen<D>{low, range});
  });
}

// Four elements per Philox block, one word each, as cpu_dropout. With `vec` (x, y 4-element
// aligned, the launcher checks) a thread moves its four elements with one load and one store
// of x's and y's type and one 4-byte store of the mask (the scalar loads of a stride-4 pattern
// cost half the bandwidth for 16-bit types).
template <class D>
struct alignas(4 * sizeof(D)) Quad {
  D v[4];
};

template <class D>
__global__ void __launch_bounds__(kBlock)
    dropout_kernel(const D* x, D* y, bool* mask, int64_t n, uint64_t threshold, dacc_t<D> scale,
                   uint64_t seed, uint64_t offset, bool vec) {
  rng::resolve_philox(seed, offset);  // Note [Graph-safe RNG]
  using A = dacc_t<D>;
  const int64_t nblocks = (n + 3) / 4;
  for (int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; blk < nblocks;
       blk += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const rng::Philox4x32 w = rng::philox4x32_10(static_cast<uint64_t>(blk), offset, seed);
    if (vec && 4 * blk + 3 < n) {
      const Quad<D> in = reinterpret_cast<const Quad<D>*>(x)[blk];
      Quad<D> out;
      uchar4 m;
      unsigned char* mb = &m.x;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool keep = rng::dropout_keep(w[j], threshold);
        mb[j] = keep;
        out.v[j] = keep ? dconvert<D>(rng::rn_mul(dconvert<A>(in.v[j]), scale)) : dconvert<D>(A(0));
      }
      reinterpret_cast<Quad<D>*>(y)[blk] = out;
      reinterpret_cast<uchar4*>(mask)[blk] = m;
      continue;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * blk + j;
      if (i >= n) break;
      const bool keep = rng::dropout_keep(w[j], threshold);
      mask[i] = keep;
      y[i] = keep ? dconvert<D>(rng::rn_mul(dconvert<A>(x[i]), scale)) : dconvert<D>(A(0));
    }
  }
}

// out = mask ? g * scale : 0 (scaled in the accumulation type), four elements a thread.
template <class D>
__global__ void __launch_bounds__(kBlock)
    dropout_backward_kernel(const D* g, const bool* mask, D* out, int64_t n, dacc_t<D> scale,
                            bool vec) {
  using A = dacc_t<D>;
  const int64_t nq = (n + 3) / 4;
  for (int64_t q = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < nq;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (vec && 4 * q + 3 < n) {
      const Quad<D> in = reinterpret_cast<const Quad<D>*>(g)[q];
      const uchar4 m = reinterpret_cast<const uchar4*>(mask)[q];
      const unsigned char* mb = &m.x;
      Quad<D> o;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        o.v[j] = mb[j] ? dconvert<D>(rng::rn_mul(dconvert<A>(in.v[j]), scale)) : dconvert<D>(A(0));
      reinterpret_cast<Quad<D>*>(out)[q] = o;
      continue;
    }
    for (int64_t i = 4 * q; i < n && i < 4 * q + 4; ++i)
      out[i] = mask[i] ? dconvert<D>(rng::rn_mul(dconvert<A>(g[i]), scale)) : dconvert<D>(A(0));
  }
}

template <class D>
bool quad_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (4 * sizeof(D)) == 0;
}

struct FourPerBlock {
  static constexpr int kPerBlock = 4;
};

void cuda_dropout(const Tensor& x, const Tensor& y, const Tensor& mask, uint64_t threshold,
                  double scale, uint64_t seed, uint64_t offset) {
  cuda_visit<kFloatSet>(x.dtype(), "dropout", [&](auto tag) {
    using D = typename decltype(tag)::type;
    const int dev = x.device().index;
    const bool vec = quad_aligned<D>(x.data_ptr()) && quad_aligned<D>(y.data_ptr()) &&
                     reinterpret_cast<uintptr_t>(mask.data_ptr()) % 4 == 0;
    dropout_kernel<D><<<grid_for<FourPerBlock>(x.numel(), dev), kBlock, 0, current_stream(dev)>>>(
        reinterpret_cast<const D*>(x.data_ptr()), reinterpret_cast<D*>(y.data_ptr()),
        mask.data<bool>(), x.numel(), threshold, static_cast<dacc_t<D>>(scale), seed, offset, vec);
    TS_CUDA_CHECK_LAUNCH();
  });
}

void cuda_dropout_backward(const Tensor& g, const Tensor& mask, const Tensor& out, double scale) {
  cuda_visit<kFloatSet>(g.dtype(), "dropout_backward", [&](auto tag) {
    using D = typename decltype(tag)::type;
    const int dev = g.device().index;
    const bool vec = quad_aligned<D>(g.data_ptr()) && quad_aligned<D>(out.data_ptr()) &&
                     reinterpret_cast<uintptr_t>(mask.data_ptr()) % 4 == 0;
    dropout_backward_kernel<D>
        <<<grid_for<FourPerBlock>(g.numel(), dev), kBlock, 0, current_stream(dev)>>>(
            reinterpret_cast<const D*>(g.data_ptr()), mask.data<bool>(),
            reinterpret_cast<D*>(out.data_ptr()), g.numel(), static_cast<dacc_t<D>>(scale), vec);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(random_fill_stub, CUDA, &cuda_random_fill);
TS_REGISTER_KERNEL(randint_stub, CUDA, &cuda_randint);
TS_REGISTER_KERNEL(dropout_stub, CUDA, &cuda_dropout);
TS_REGISTER_KERNEL(dropout_backward_stub, CUDA, &cuda_dropout_backward);

}  // namespace ts::cuda
