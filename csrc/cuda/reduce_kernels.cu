// CUDA reductions over a ReducePlan (Note [Reduction plan]): sum, prod, mean (sum / divisor),
// max/min (NaN-propagating), all/any/count_nonzero, the var helper and argmax/argmin.
// Note [CUDA reduction]: three layouts. inner-block: a block of 256 threads reduces a slice of
// one output's run (grid.y splits long runs; partial results then meet in a second pass);
// inner-warp: runs shorter than a block get one warp each; outer: the kept dim is innermost,
// so each thread owns one output and walks the reduced dim, reads coalescing across threads.
// float16/bfloat16/float32 accumulate in float32 with four accumulators per thread and a
// tree over threads, far closer to the exact sum than one running total.
#include "kernels/scalar_math.h"
#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "iter/reduce_iter.h"
#include "ops/reduce.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

struct RedArgs {
  const char* in;
  char* out;
  int64_t n_out, n_red, red_stride;  // bytes
  int nkept;
  int64_t kept_sizes[kMaxDims], kept_in[kMaxDims], kept_out[kMaxDims];
  double divisor;
};

__device__ __forceinline__ void kept_offsets(const RedArgs& a, int64_t k, int64_t& in_off,
                                             int64_t& out_off) {
  in_off = out_off = 0;
  for (int d = 0; d < a.nkept; ++d) {
    const int64_t i = k % a.kept_sizes[d];
    k /= a.kept_sizes[d];
    in_off += i * a.kept_in[d];
    out_off += i * a.kept_out[d];
  }
}

// Shuffles any trivially copyable value through 32-bit words.
template <class T>
__device__ __forceinline__ T shfl_down(T v, int delta) {
  constexpr int W = (sizeof(T) + 3) / 4;
  int w[W];
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta);
  T r;
  memcpy(&r, w, sizeof(T));
  return r;
}

template <class Op, class Acc>
__device__ __forceinline__ Acc warp_reduce(const Op& op, Acc v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = op.combine(v, shfl_down(v, d));
  return v;
}

template <class Op, class Acc>
__device__ Acc block_reduce(const Op& op, Acc v) {
  __shared__ unsigned char smem[32 * sizeof(Acc)];
  Acc* s = reinterpret_cast<Acc*>(smem);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce(op, v);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  const int nw = blockDim.x >> 5;
  v = threadIdx.x < nw ? s[threadIdx.x] : op.identity();
  if (warp == 0) v = warp_reduce(op, v);
  return v;
}

template <class Op>
__device__ __forceinline__ typename Op::Acc load_elem(const Op& op, const char* p, int64_t off,
                                                      int64_t i) {
  return op.map(*reinterpret_cast<const typename Op::In*>(p + off), i);
}

// Accumulates elements [first, e) of a run with unit stride, `step` apart per thread, reading
// 16 bytes at a time; p + first * sizeof(In) must be 16-byte aligned.
template <class Op>
__device__ __forceinline__ typename Op::Acc accumulate_vec(const Op& op, const char* p,
                                                           int64_t first, int64_t e, int tid,
                                                           int step) {
  using In = typename Op::In;
  using Acc = typename Op::Acc;
  constexpr int V = sizeof(In) >= 16 ? 1 : 16 / sizeof(In);
  struct alignas(16) Vec {
    In v[V];
  };
  const In* base = reinterpret_cast<const In*>(p) + first;
  const int64_t nvec = (e - first) / V;
  Acc acc[4] = {op.identity(), op.identity(), op.identity(), op.identity()};
  for (int64_t v = tid; v < nvec; v += step) {
    const Vec x = reinterpret_cast<const Vec*>(base)[v];
#pragma unroll
    for (int j = 0; j < V; ++j)
      acc[j & 3] = op.combine(acc[j & 3], op.map(x.v[j], first + v * V + j));
  }
  for (int64_t i = first + nvec * V + tid; i < e; i += step)
    acc[0] = op.combine(acc[0], op.map(base[i - first], i));
  return op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
}

// Accumulates elements [b, e) of output k's run, strided by `step` elements, from `first`.
template <class Op>
__device__ __forceinline__ typename Op::Acc accumulate(const Op& op, const char* p, int64_t stride,
                                                       int64_t first, int64_t e, int64_t step) {
  using Acc = typename Op::Acc;
  Acc acc[4] = {op.identity(), op.identity(), op.identity(), op.identity()};
  int64_t i = first;
  for (; i + 3 * step < e; i += 4 * step) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      acc[j] = op.combine(acc[j], load_elem(op, p, (i + j * step) * stride, i + j * step));
  }
  for (; i < e; i += step) acc[0] = op.combine(acc[0], load_elem(op, p, i * stride, i));
  return op.combine(op.combine(acc[0], acc[1]), op.combine(acc[2], acc[3]));
}

// inner-block: grid (n_out, splits); `partial` (when splits > 1) receives one Acc per block.
template <class Op>
__global__ void reduce_inner_block(RedArgs a, Op op, int64_t chunk, typename Op::Acc* partial) {
  const int64_t k = blockIdx.x;
  int64_t in_off, out_off;
  kept_offsets(a, k, in_off, out_off);
  const int64_t b = blockIdx.y * chunk, e = ::min(a.n_red, b + chunk);
  const char* p = a.in + in_off;
  using In = typename Op::In;
  typename Op::Acc v;
  if (a.red_stride == sizeof(In) && reinterpret_cast<uintptr_t>(p + b * sizeof(In)) % 16 == 0)
    v = accumulate_vec(op, p, b, e, threadIdx.x, blockDim.x);
  else
    v = accumulate(op, p, a.red_stride, b + threadIdx.x, e, blockDim.x);
  v = block_reduce(op, v);
  if (threadIdx.x != 0) return;
  if (partial)
    partial[blockIdx.y * a.n_out + k] = v;
  else
    op.store(a.out + out_off, v, a.divisor);
}

// inner-warp: each warp reduces one output's (short) run.
template <class Op>
__global__ void reduce_inner_warp(RedArgs a, Op op) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (k >= a.n_out) return;
  int64_t in_off, out_off;
  kept_offsets(a, k, in_off, out_off);
  const int lane = threadIdx.x & 31;
  auto v = accumulate(op, a.in + in_off, a.red_stride, lane, a.n_red, 32);
  v = warp_reduce(op, v);
  if (lane == 0) op.store(a.out + out_off, v, a.divisor);
}

// outer: grid (ceil(n_out / block), splits); thread = output.
template <class Op>
__global__ void reduce_outer(RedArgs a, Op op, int64_t chunk, typename Op::Acc* partial) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= a.n_out) return;
  int64_t in_off, out_off;
  kept_offsets(a, k, in_off, out_off);
  const int64_t b = blockIdx.y * chunk, e = ::min(a.n_red, b + chunk);
  auto v = accumulate(op, a.in + in_off, a.red_stride, b, e, 1);
  if (partial)
    partial[blockIdx.y * a.n_out + k] = v;
  else
    op.store(a.out + out_off, v, a.divisor);
}

// Second pass: combines the splits' partial results of each output.
template <class Op>
__global__ void reduce_partials(RedArgs a, Op op, const typename Op::Acc* partial, int splits) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= a.n_out) return;
  int64_t in_off, out_off;
  kept_offsets(a, k, in_off, out_off);
  auto v = op.identity();
  for (int s = 0; s < splits; ++s) v = op.combine(v, partial[s * a.n_out + k]);
  op.store(a.out + out_off, v, a.divisor);
}

// Second pass for few outputs: a block per output combines its splits as a tree. A running
// total over a thousand float partials (a full sum of 2^24 elements) lost 1e-5 relative; the
// tree keeps the first pass's accuracy.
template <class Op>
__global__ void reduce_partials_block(RedArgs a, Op op, const typename Op::Acc* partial,
                                      int splits) {
  const int64_t k = blockIdx.x;
  auto v = op.identity();
  for (int s = threadIdx.x; s < splits; s += blockDim.x)
    v = op.combine(v, partial[s * a.n_out + k]);
  v = block_reduce(op, v);
  if (threadIdx.x != 0) return;
  int64_t in_off, out_off;
  kept_offsets(a, k, in_off, out_off);
  op.store(a.out + out_off, v, a.divisor);
}

RedArgs make_red_args(const ReducePlan& p, double divisor) {
  RedArgs a{};
  a.in = p.in;
  a.out = p.out;
  a.n_out = p.n_out;
  a.n_red = p.n_red;
  a.red_stride = p.red_sizes.empty() ? 0 : p.red_strides[0];
  TS_CHECK(p.kept_sizes.size() <= kMaxDims, RuntimeError, "CUDA reduction: too many kept dims");
  a.nkept = static_cast<int>(p.kept_sizes.size());
  for (int d = 0; d < a.nkept; ++d) {
    a.kept_sizes[d] = p.kept_sizes[d];
    a.kept_in[d] = p.kept_in[d];
    a.kept_out[d] = p.kept_out[d];
  }
  a.divisor = divisor;
  return a;
}

template <class Op>
void launch_reduce(const ReducePlan& p, const Op& op, double divisor) {
  using Acc = typename Op::Acc;
  if (p.n_out == 0) return;
  RedArgs a = make_red_args(p, divisor);
  const int dev = current_device();
  cudaStream_t s = current_stream(dev);
  const int64_t target_blocks = static_cast<int64_t>(sm_count(dev)) * 8;
  Tensor scratch;
  auto partials = [&](int splits) -> Acc* {
    if (splits <= 1) return nullptr;
    scratch = Tensor::empty(Shape{static_cast<int64_t>(sizeof(Acc)) * splits * p.n_out},
                            DType::UInt8, Device{DeviceType::CUDA, static_cast<int16_t>(dev)});
    return reinterpret_cast<Acc*>(scratch.data_ptr());
  };
  int splits = 1;
  if (p.is_outer()) {
    const int64_t gx = (p.n_out + kBlock - 1) / kBlock;
    if (gx < target_blocks)
      splits = static_cast<int>(std::min<int64_t>(target_blocks / gx, (p.n_red + 63) / 64));
    splits = std::max(splits, 1);
    const int64_t chunk = (p.n_red + splits - 1) / splits;
    Acc* part = partials(splits);
    reduce_outer<<<dim3(static_cast<unsigned>(gx), splits), kBlock, 0, s>>>(a, op, chunk, part);
  } else if (p.n_red < kBlock && p.n_out > 1) {
    const int64_t gx = (p.n_out + kBlock / 32 - 1) / (kBlock / 32);
    reduce_inner_warp<<<static_cast<unsigned>(gx), kBlock, 0, s>>>(a, op);
  } else {
    if (p.n_out < target_blocks)
      splits = static_cast<int>(
          std::min<int64_t>(target_blocks / p.n_out, (p.n_red + kBlock * 16 - 1) / (kBlock * 16)));
    splits = std::max(splits, 1);
    // Chunks start 16-byte aligned (a multiple of 16 elements), so each can read vectors.
    const int64_t chunk = std::max<int64_t>(16, ((p.n_red + splits - 1) / splits + 15) / 16 * 16);
    splits = std::max(1, static_cast<int>((p.n_red + chunk - 1) / chunk));  // n_red may be 0
    Acc* part = partials(splits);
    reduce_inner_block<<<dim3(static_cast<unsigned>(p.n_out), splits), kBlock, 0, s>>>(a, op, chunk,
                                                                                       part);
  }
  TS_CUDA_CHECK_LAUNCH();
  if (splits > 1) {
    const Acc* part = reinterpret_cast<const Acc*>(scratch.data_ptr());
    if (p.n_out <= kBlock * 4) {
      reduce_partials_block<<<static_cast<unsigned>(p.n_out), kBlock, 0, s>>>(a, op, part, splits);
    } else {
      const unsigned g = static_cast<unsigned>((p.n_out + kBlock - 1) / kBlock);
      reduce_partials<<<g, kBlock, 0, s>>>(a, op, part, splits);
    }
    TS_CUDA_CHECK_LAUNCH();
  }
}

// ---- The ops. Each has Acc, identity(), load(base, byte_offset, index), combine, store.
template <class In_, class A, class Out>
struct SumOp {
  using Acc = A;
  bool squares = false;
  __device__ Acc identity() const { return Acc(0); }
  using In = In_;
  __device__ Acc map(In x, int64_t) const {
    const Acc v = dconvert<Acc>(x);
    return squares ? v * v : v;
  }
  __device__ Acc combine(Acc x, Acc y) const { return x + y; }
  __device__ void store(char* p, Acc v, double div) const {
    if (div != 1.0) {
      if constexpr (is_dcomplex_v<Acc>)
        v = Acc(v.real() / div, v.imag() / div);
      else
        v = static_cast<Acc>(v / div);
    }
    *reinterpret_cast<Out*>(p) = dconvert<Out>(v);
  }
};

template <class In, class A, class Out>
struct ProdOp : SumOp<In, A, Out> {
  __device__ A identity() const { return A(1); }
  __device__ A combine(A x, A y) const {
    if constexpr (::cuda::std::is_integral_v<A> && !::cuda::std::is_same_v<A, bool>)
      return scalar::wrap_mul(x, y);
    else
      return x * y;
  }
};

template <class In_, bool kMax>
struct MinMaxOp {
  using In = In_;
  using Acc = dacc_t<In>;
  __device__ Acc identity() const {
    if constexpr (::cuda::std::is_same_v<Acc, bool>)
      return !kMax;
    else if constexpr (kMax)
      return ::cuda::std::numeric_limits<Acc>::lowest();
    else
      return ::cuda::std::numeric_limits<Acc>::max();
  }
  __device__ Acc map(In x, int64_t) const { return dconvert<Acc>(x); }
  __device__ Acc combine(Acc x, Acc y) const {
    if (x != x) return x;  // NaN propagates
    if (y != y) return y;
    return kMax ? (y > x ? y : x) : (y < x ? y : x);
  }
  __device__ void store(char* p, Acc v, double) const {
    *reinterpret_cast<In*>(p) = dconvert<In>(v);
  }
};

// all / any / count_nonzero: Mode 0 all, 1 any, 2 count.
template <class In_, int Mode>
struct TruthOp {
  using In = In_;
  using Acc = ::cuda::std::conditional_t<Mode == 2, int64_t, bool>;
  __device__ Acc identity() const { return Mode == 0 ? Acc(1) : Acc(0); }
  __device__ Acc map(In x, int64_t) const { return static_cast<Acc>(dconvert<bool>(x)); }
  __device__ Acc combine(Acc x, Acc y) const {
    if constexpr (Mode == 0)
      return x && y;
    else if constexpr (Mode == 1)
      return x || y;
    else
      return x + y;
  }
  __device__ void store(char* p, Acc v, double) const { *reinterpret_cast<Acc*>(p) = v; }
};

template <class A>
struct ValIdx {
  A v;
  int64_t i;
};

// argmax/argmin: the first index of the extreme value; a NaN is the extreme (the first NaN).
template <class In_, bool kMax>
struct ArgOp {
  using In = In_;
  using A = dacc_t<In>;
  using Acc = ValIdx<A>;
  __device__ Acc identity() const { return {A(0), -1}; }
  __device__ Acc map(In x, int64_t i) const { return {dconvert<A>(x), i}; }
  __device__ Acc combine(Acc x, Acc y) const {
    if (x.i < 0) return y;
    if (y.i < 0) return x;
    const bool xn = x.v != x.v, yn = y.v != y.v;
    if (xn || yn) {
      if (xn && yn) return x.i < y.i ? x : y;
      return xn ? x : y;
    }
    if (x.v == y.v) return x.i < y.i ? x : y;
    return (kMax ? y.v > x.v : y.v < x.v) ? y : x;
  }
  __device__ void store(char* p, Acc v, double) const { *reinterpret_cast<int64_t*>(p) = v.i; }
};

template <class T>
using sum_acc_t = ::cuda::std::conditional_t<
    ::cuda::std::is_same_v<T, bool> || ::cuda::std::is_signed_v<T>&& ::cuda::std::is_integral_v<T>,
    int64_t,
    ::cuda::std::conditional_t<::cuda::std::is_unsigned_v<T>&& ::cuda::std::is_integral_v<T>,
                               uint64_t, dacc_t<T>>>;
template <class T>
using sum_out_t = ::cuda::std::conditional_t<::cuda::std::is_integral_v<T>, sum_acc_t<T>, T>;

template <bool kProd>
void sum_like_cuda(const ReducePlan& p, DType in, DType, double div) {
  cuda_visit<kAllSet>(in, kProd ? "prod" : "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = sum_acc_t<T>;
    using O = sum_out_t<T>;
    if constexpr (kProd)
      launch_reduce(p, ProdOp<T, A, O>{}, div);
    else
      launch_reduce(p, SumOp<T, A, O>{}, div);
  });
}
void sum_cuda(const ReducePlan& p, DType in, DType out, double div) {
  sum_like_cuda<false>(p, in, out, div);
}
void prod_cuda(const ReducePlan& p, DType in, DType out, double div) {
  sum_like_cuda<true>(p, in, out, div);
}
void sum_squares_cuda(const ReducePlan& p, DType in, DType, double) {
  cuda_visit<kFloatSet>(in, "var", [&](auto tag) {
    using T = typename decltype(tag)::type;
    SumOp<T, dacc_t<T>, T> op;
    op.squares = true;
    launch_reduce(p, op, 1.0);
  });
}
template <bool kMax>
void minmax_cuda(const ReducePlan& p, DType in, DType, double) {
  cuda_visit<kRealSet | kBoolSet>(in, kMax ? "max" : "min", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_reduce(p, MinMaxOp<T, kMax>{}, 1.0);
  });
}
template <int Mode>
void truth_cuda(const ReducePlan& p, DType in, DType, double) {
  cuda_visit<kAllSet>(in, "all", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_reduce(p, TruthOp<T, Mode>{}, 1.0);
  });
}
template <bool kMax>
void arg_cuda(const ReducePlan& p, DType in) {
  cuda_visit<kRealSet | kBoolSet>(in, kMax ? "argmax" : "argmin", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_reduce(p, ArgOp<T, kMax>{}, 1.0);
  });
}

template <class T>
__global__ void sqrt_inplace_kernel(T* v, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) v[i] = dconvert<T>(::cuda::std::sqrt(dconvert<dacc_t<T>>(v[i])));
}
void std_sqrt_cuda(const Tensor& t) {
  cuda_visit<kFloatSet>(t.dtype(), "std", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = t.numel();
    sqrt_inplace_kernel<T>
        <<<static_cast<unsigned>((n + 255) / 256), 256, 0, current_stream(t.device().index)>>>(
            t.data<T>(), n);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(sum_stub, CUDA, &sum_cuda);
TS_REGISTER_KERNEL(prod_stub, CUDA, &prod_cuda);
TS_REGISTER_KERNEL(sum_squares_stub, CUDA, &sum_squares_cuda);
TS_REGISTER_KERNEL(max_stub, CUDA, &minmax_cuda<true>);
TS_REGISTER_KERNEL(min_stub, CUDA, &minmax_cuda<false>);
TS_REGISTER_KERNEL(all_stub, CUDA, &truth_cuda<0>);
TS_REGISTER_KERNEL(any_stub, CUDA, &truth_cuda<1>);
TS_REGISTER_KERNEL(count_nonzero_stub, CUDA, &truth_cuda<2>);
TS_REGISTER_KERNEL(argmax_stub, CUDA, &arg_cuda<true>);
TS_REGISTER_KERNEL(argmin_stub, CUDA, &arg_cuda<false>);
TS_REGISTER_KERNEL(std_sqrt_stub, CUDA, &std_sqrt_cuda);

}  // namespace ts::cuda
