// CUDA kernels of N-d max/average pooling, strided and adaptive (ops/pool.h), with the CPU
// kernels' windows and arithmetic (cpu/pool_kernels.cpp): one thread per output for the
// forward; the backward gathers, one thread per input element, the outputs whose windows
// hold it, in output order, so the sums need no atomics and are deterministic. Every geometry
// runs as 3-D (1-D/2-D specs have size-1 leading dims); planes are (n, c) pairs.
// Note [CUDA channels-last pools]: with PoolSpec::channels_last, x, y, indices, gy and gx are
// all channels-last ((N, *spatial, C) in memory) and the same kernels address them so: a
// plane's element at flat spatial position pos lives at base + pos * step, with (base, step)
// = (plane * I, 1) for NCHW and (n * I * C + c, C) for NHWC; thread i still handles element i
// of the array it writes, so in NHWC neighbouring threads take neighbouring channels and every
// load is coalesced. No layout copies; indices keep PyTorch's per-plane spatial positions.
#include <algorithm>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "ops/pool.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 1 << 20));
}

// PoolSpec as plain arrays for the device.
struct PGeo {
  int64_t in[3], out[3], k[3], s[3], p[3], d[3];
  int64_t divisor;
  int64_t C;  // channels (dim 1): the NHWC addressing's step
  bool count_include_pad, adaptive, cl;
};

PGeo make_geo(const PoolSpec& s, int64_t channels) {
  PGeo g;
  g.C = std::max<int64_t>(channels, 1);
  g.cl = s.channels_last;
  for (int i = 0; i < 3; ++i) {
    g.in[i] = s.in[i];
    g.out[i] = s.out[i];
    g.k[i] = s.k[i];
    g.s[i] = s.s[i];
    g.p[i] = s.p[i];
    g.d[i] = s.d[i];
  }
  g.divisor = s.divisor;
  g.count_include_pad = s.count_include_pad;
  g.adaptive = s.adaptive;
  return g;
}

struct Span {
  int64_t lo, hi, pad_len;
};

// Dim i's window for output position o (cpu/pool_kernels.cpp's span_of / window).
__device__ __forceinline__ Span window(const PGeo& g, int i, int64_t o, int64_t d) {
  if (g.adaptive) {
    const int64_t n = g.in[i], m = g.out[i];
    const int64_t lo = (o * n) / m, hi = ((o + 1) * n + m - 1) / m;
    return {lo, hi, hi - lo};
  }
  int64_t start = o * g.s[i] - g.p[i];
  const int64_t end = start + (g.k[i] - 1) * d + 1;
  const int64_t pad_end = min(end, g.in[i] + g.p[i]);
  const int64_t pad_len = pad_end - start;
  while (start < 0) start += d;
  return {start, min(end, g.in[i]), pad_len};
}

// The outputs along dim i whose windows may hold input position x: [*lo, *hi].
__device__ __forceinline__ void candidates(const PGeo& g, int i, int64_t x, int64_t* lo,
                                           int64_t* hi) {
  const int64_t m = g.out[i];
  if (g.adaptive) {
    const int64_t n = g.in[i];
    *lo = (x * m) / n;
    *hi = ((x + 1) * m - 1) / n;
  } else {
    const int64_t top = x + g.p[i], first = top - (g.k[i] - 1) * g.d[i];
    *lo = first <= 0 ? 0 : (first + g.s[i] - 1) / g.s[i];
    *hi = top / g.s[i];
  }
  *lo = max(*lo, int64_t(0));
  *hi = min(*hi, m - 1);
}

__device__ __forceinline__ int64_t taps(const Span& sp) {
  return sp.hi > sp.lo ? sp.hi - sp.lo : 0;
}

__device__ __forceinline__ int64_t divisor_of(const PGeo& g, const Span& a, const Span& b,
                                              const Span& c) {
  if (g.divisor) return g.divisor;
  if (g.count_include_pad) return a.pad_len * b.pad_len * c.pad_len;
  return taps(a) * taps(b) * taps(c);
}

// A plane's element at spatial position pos of an array with `len` positions a plane sits at
// base + pos * step (Note [CUDA channels-last pools]).
struct Plane {
  int64_t base, step;
};
// Element i of an array of `len` positions a plane: its spatial position, and the addressing
// of the same plane in the other array (of `other_len` positions a plane).
__device__ __forceinline__ void plane_of(const PGeo& g, int64_t i, int64_t len, int64_t* pos,
                                        Plane* other, int64_t other_len) {
  if (g.cl) {
    const int64_t c = i % g.C, r = i / g.C, n = r / len;
    *pos = r - n * len;
    *other = {n * other_len * g.C + c, g.C};
  } else {
    const int64_t pl = i / len;
    *pos = i - pl * len;
    *other = {pl * other_len, 1};
  }
}

// Output element i of (N, C, Do, Ho, Wo) (either layout): its flat spatial position,
// coordinates, and the addressing of its input plane.
struct OutAt {
  int64_t o, od, oh, ow;
  Plane in;
};
__device__ __forceinline__ OutAt out_at(const PGeo& g, int64_t i) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2], I = g.in[0] * g.in[1] * g.in[2];
  OutAt a;
  plane_of(g, i, L, &a.o, &a.in, I);
  a.od = a.o / (g.out[2] * g.out[1]);
  a.oh = (a.o / g.out[2]) % g.out[1];
  a.ow = a.o % g.out[2];
  return a;
}

// Input element i of (N, C, D, H, W) (either layout): its flat spatial position, coordinates,
// the addressing of its output plane, and per dim the outputs [lo, hi] whose windows may hold
// it.
struct InAt {
  int64_t pos, x[3], lo[3], hi[3];
  Plane out;
};
__device__ __forceinline__ InAt in_at(const PGeo& g, int64_t i) {
  const int64_t I = g.in[0] * g.in[1] * g.in[2], L = g.out[0] * g.out[1] * g.out[2];
  InAt a;
  plane_of(g, i, I, &a.pos, &a.out, L);
  a.x[2] = a.pos % g.in[2];
  a.x[1] = (a.pos / g.in[2]) % g.in[1];
  a.x[0] = a.pos / (g.in[2] * g.in[1]);
  for (int d = 0; d < 3; ++d) candidates(g, d, a.x[d], &a.lo[d], &a.hi[d]);
  return a;
}

template <class T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y,
                                int64_t* __restrict__ idx, PGeo g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t H = g.in[1], W = g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const OutAt at0 = out_at(g, i);
    const Span a = window(g, 0, at0.od, g.d[0]), b = window(g, 1, at0.oh, g.d[1]),
               c = window(g, 2, at0.ow, g.d[2]);
    const T* xs = x + at0.in.base;
    const int64_t st = at0.in.step;
    A best = -INFINITY;
    int64_t at = (a.lo * H + b.lo) * W + c.lo;
    for (int64_t id = a.lo; id < a.hi; id += g.d[0])
      for (int64_t ih = b.lo; ih < b.hi; ih += g.d[1]) {
        const int64_t row = (id * H + ih) * W;
        for (int64_t iw = c.lo; iw < c.hi; iw += g.d[2]) {
          const A v = A(xs[(row + iw) * st]);
          if (v > best || v != v) {  // PyTorch's rule: the last NaN wins
            best = v;
            at = row + iw;
          }
        }
      }
    y[i] = T(best);
    idx[i] = at;
  }
}

template <class T>
__global__ void max_pool_backward_kernel(const T* __restrict__ gy, const int64_t* __restrict__ idx,
                                         T* __restrict__ gx, PGeo g, int64_t total) {
  using A = dacc_t<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const InAt in = in_at(g, i);
    const T* gs = gy + in.out.base;
    const int64_t* is = idx + in.out.base;
    const int64_t st = in.out.step;
    A acc = A(0);
    for (int64_t od = in.lo[0]; od <= in.hi[0]; ++od)
      for (int64_t oh = in.lo[1]; oh <= in.hi[1]; ++oh)
        for (int64_t ow = in.lo[2]; ow <= in.hi[2]; ++ow) {
          const int64_t o = ((od * g.out[1] + oh) * g.out[2] + ow) * st;
          if (is[o] == in.pos) acc += A(gs[o]);
        }
    gx[i] = T(acc);
  }
}

template <class T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, PGeo g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t H = g.in[1], W = g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const OutAt at = out_at(g, i);
    const Span a = window(g, 0, at.od, 1), b = window(g, 1, at.oh, 1), c = window(g, 2, at.ow, 1);
    const T* xs = x + at.in.base;
    const int64_t st = at.in.step;
    A sum = A(0);
    for (int64_t id = a.lo; id < a.hi; ++id)
      for (int64_t ih = b.lo; ih < b.hi; ++ih) {
        const T* r = xs + (id * H + ih) * W * st;
        for (int64_t iw = c.lo; iw < c.hi; ++iw) sum += A(r[iw * st]);
      }
    const int64_t div = divisor_of(g, a, b, c);
    y[i] = T(div ? sum / A(div) : A(NAN));
  }
}

template <class T>
__global__ void avg_pool_backward_kernel(const T* __restrict__ gy, T* __restrict__ gx, PGeo g,
                                         int64_t total) {
  using A = dacc_t<T>;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const InAt in = in_at(g, i);
    const T* gs = gy + in.out.base;
    const int64_t st = in.out.step;
    A acc = A(0);
    for (int64_t od = in.lo[0]; od <= in.hi[0]; ++od) {
      const Span a = window(g, 0, od, 1);
      if (in.x[0] < a.lo || in.x[0] >= a.hi) continue;
      for (int64_t oh = in.lo[1]; oh <= in.hi[1]; ++oh) {
        const Span b = window(g, 1, oh, 1);
        if (in.x[1] < b.lo || in.x[1] >= b.hi) continue;
        for (int64_t ow = in.lo[2]; ow <= in.hi[2]; ++ow) {
          const Span c = window(g, 2, ow, 1);
          if (in.x[2] < c.lo || in.x[2] >= c.hi) continue;
          const int64_t div = divisor_of(g, a, b, c);
          if (div) acc += A(gs[((od * g.out[1] + oh) * g.out[2] + ow) * st]) / A(div);
        }
      }
    }
    gx[i] = T(acc);
  }
}

template <class T>
T* ptr(const Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

// Launches launch(tag, grid, stream, geometry, count) with one thread per element of `out` in
// out's dtype; a backward with no outputs (`zero_if_empty`) just zeroes `out`.
template <class Launch>
void pool_launch(const char* op, const Tensor& out, DType dt, const PoolSpec& s, bool zero_if_empty,
                 Launch&& launch) {
  const int dev = out.device().index;
  DeviceGuard guard(dev);
  const int64_t total = out.numel();
  cudaStream_t st = current_stream(dev);
  if (zero_if_empty && s.out_numel() == 0) {
    TS_CUDA_CHECK(cudaMemsetAsync(out.data_ptr(), 0, total * out.itemsize(), st));
    return;
  }
  const PGeo g = make_geo(s, out.ndim() >= 2 ? out.dim(1) : 1);
  cuda_visit<kFloatSet>(dt, op, [&](auto tag) { launch(tag, grid_for(total), st, g, total); });
  TS_CUDA_CHECK_LAUNCH();
}

void cuda_max(const Tensor& x, const Tensor& y, const Tensor& idx, const PoolSpec& s) {
  pool_launch("max_pool", y, x.dtype(), s, false,
              [&](auto tag, unsigned grid, cudaStream_t st, const PGeo& g, int64_t n) {
                using T = typename decltype(tag)::type;
                max_pool_kernel<T>
                    <<<grid, kThreads, 0, st>>>(ptr<T>(x), ptr<T>(y), ptr<int64_t>(idx), g, n);
              });
}

void cuda_max_backward(const Tensor& gy, const Tensor& idx, const Tensor& gx, const PoolSpec& s) {
  pool_launch("max_pool_backward", gx, gx.dtype(), s, true,
              [&](auto tag, unsigned grid, cudaStream_t st, const PGeo& g, int64_t n) {
                using T = typename decltype(tag)::type;
                max_pool_backward_kernel<T>
                    <<<grid, kThreads, 0, st>>>(ptr<T>(gy), ptr<int64_t>(idx), ptr<T>(gx), g, n);
              });
}

void cuda_avg(const Tensor& x, const Tensor& y, const PoolSpec& s) {
  pool_launch("avg_pool", y, x.dtype(), s, false,
              [&](auto tag, unsigned grid, cudaStream_t st, const PGeo& g, int64_t n) {
                using T = typename decltype(tag)::type;
                avg_pool_kernel<T><<<grid, kThreads, 0, st>>>(ptr<T>(x), ptr<T>(y), g, n);
              });
}

void cuda_avg_backward(const Tensor& gy, const Tensor& gx, const PoolSpec& s) {
  pool_launch("avg_pool_backward", gx, gx.dtype(), s, true,
              [&](auto tag, unsigned grid, cudaStream_t st, const PGeo& g, int64_t n) {
                using T = typename decltype(tag)::type;
                avg_pool_backward_kernel<T>
                    <<<grid, kThreads, 0, st>>>(ptr<T>(gy), ptr<T>(gx), g, n);
              });
}

}  // namespace

TS_REGISTER_KERNEL(max_pool_nd_stub, CUDA, &cuda_max);
TS_REGISTER_KERNEL(max_pool_nd_backward_stub, CUDA, &cuda_max_backward);
TS_REGISTER_KERNEL(avg_pool_nd_stub, CUDA, &cuda_avg);
TS_REGISTER_KERNEL(avg_pool_nd_backward_stub, CUDA, &cuda_avg_backward);

}  // namespace ts::cuda
