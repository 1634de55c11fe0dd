// CUDA kernels of N-d max/average pooling, strided and adaptive (ops/pool.h), with the CPU
// kernels' windows and arithmetic (cpu/pool_kernels.cpp): one thread per output for the
// forward; the backward gathers, one thread per input element, the outputs whose windows
// hold it, in output order, so the sums need no atomics and are deterministic. Every geometry
// runs as 3-D (1-D/2-D specs have size-1 leading dims); planes are (n, c) pairs.
#include <algorithm>

#include "cuda/cuda_check.h"
#include "cuda/cuda_state.h"
#include "cuda/device_types.cuh"
#include "ops/pool.h"

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
  bool count_include_pad, adaptive;
};

PGeo make_geo(const PoolSpec& s) {
  PGeo g;
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

template <class T>
__global__ void max_pool_kernel(const T* __restrict__ x, T* __restrict__ y,
                                int64_t* __restrict__ idx, PGeo g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t L = g.out[0] * g.out[1] * g.out[2], I = g.in[0] * g.in[1] * g.in[2];
  const int64_t H = g.in[1], W = g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pl = i / L, o = i % L;
    const int64_t ow = o % g.out[2], oh = (o / g.out[2]) % g.out[1], od = o / (g.out[2] * g.out[1]);
    const Span a = window(g, 0, od, g.d[0]), b = window(g, 1, oh, g.d[1]),
               c = window(g, 2, ow, g.d[2]);
    const T* xs = x + pl * I;
    A best = -INFINITY;
    int64_t at = (a.lo * H + b.lo) * W + c.lo;
    for (int64_t id = a.lo; id < a.hi; id += g.d[0])
      for (int64_t ih = b.lo; ih < b.hi; ih += g.d[1]) {
        const int64_t row = (id * H + ih) * W;
        for (int64_t iw = c.lo; iw < c.hi; iw += g.d[2]) {
          const A v = A(xs[row + iw]);
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
  const int64_t L = g.out[0] * g.out[1] * g.out[2], I = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pl = i / I, pos = i % I;
    const int64_t iw = pos % g.in[2], ih = (pos / g.in[2]) % g.in[1],
                  id = pos / (g.in[2] * g.in[1]);
    int64_t dlo, dhi, hlo, hhi, wlo, whi;
    candidates(g, 0, id, &dlo, &dhi);
    candidates(g, 1, ih, &hlo, &hhi);
    candidates(g, 2, iw, &wlo, &whi);
    const T* gs = gy + pl * L;
    const int64_t* is = idx + pl * L;
    A acc = A(0);
    for (int64_t od = dlo; od <= dhi; ++od)
      for (int64_t oh = hlo; oh <= hhi; ++oh)
        for (int64_t ow = wlo; ow <= whi; ++ow) {
          const int64_t o = (od * g.out[1] + oh) * g.out[2] + ow;
          if (is[o] == pos) acc += A(gs[o]);
        }
    gx[i] = T(acc);
  }
}

template <class T>
__global__ void avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, PGeo g, int64_t total) {
  using A = dacc_t<T>;
  const int64_t L = g.out[0] * g.out[1] * g.out[2], I = g.in[0] * g.in[1] * g.in[2];
  const int64_t H = g.in[1], W = g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pl = i / L, o = i % L;
    const int64_t ow = o % g.out[2], oh = (o / g.out[2]) % g.out[1], od = o / (g.out[2] * g.out[1]);
    const Span a = window(g, 0, od, 1), b = window(g, 1, oh, 1), c = window(g, 2, ow, 1);
    const T* xs = x + pl * I;
    A sum = A(0);
    for (int64_t id = a.lo; id < a.hi; ++id)
      for (int64_t ih = b.lo; ih < b.hi; ++ih) {
        const T* r = xs + (id * H + ih) * W;
        for (int64_t iw = c.lo; iw < c.hi; ++iw) sum += A(r[iw]);
      }
    const int64_t div = divisor_of(g, a, b, c);
    y[i] = T(div ? sum / A(div) : A(NAN));
  }
}

template <class T>
__global__ void avg_pool_backward_kernel(const T* __restrict__ gy, T* __restrict__ gx, PGeo g,
                                         int64_t total) {
  using A = dacc_t<T>;
  const int64_t L = g.out[0] * g.out[1] * g.out[2], I = g.in[0] * g.in[1] * g.in[2];
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t pl = i / I, pos = i % I;
    const int64_t iw = pos % g.in[2], ih = (pos / g.in[2]) % g.in[1],
                  id = pos / (g.in[2] * g.in[1]);
    int64_t dlo, dhi, hlo, hhi, wlo, whi;
    candidates(g, 0, id, &dlo, &dhi);
    candidates(g, 1, ih, &hlo, &hhi);
    candidates(g, 2, iw, &wlo, &whi);
    const T* gs = gy + pl * L;
    A acc = A(0);
    for (int64_t od = dlo; od <= dhi; ++od) {
      const Span a = window(g, 0, od, 1);
      if (id < a.lo || id >= a.hi) continue;
      for (int64_t oh = hlo; oh <= hhi; ++oh) {
        const Span b = window(g, 1, oh, 1);
        if (ih < b.lo || ih >= b.hi) continue;
        for (int64_t ow = wlo; ow <= whi; ++ow) {
          const Span c = window(g, 2, ow, 1);
          if (iw < c.lo || iw >= c.hi) continue;
          const int64_t div = divisor_of(g, a, b, c);
          if (div) acc += A(gs[(od * g.out[1] + oh) * g.out[2] + ow]) / A(div);
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

void cuda_max(const Tensor& x, const Tensor& y, const Tensor& idx, const PoolSpec& s) {
  const int dev = y.device().index;
  DeviceGuard guard(dev);
  const int64_t total = y.numel();
  cuda_visit<kFloatSet>(x.dtype(), "max_pool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_kernel<T><<<grid_for(total), kThreads, 0, current_stream(dev)>>>(
        ptr<T>(x), ptr<T>(y), ptr<int64_t>(idx), make_geo(s), total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void cuda_max_backward(const Tensor& gy, const Tensor& idx, const Tensor& gx, const PoolSpec& s) {
  const int dev = gx.device().index;
  DeviceGuard guard(dev);
  const int64_t total = gx.numel();
  if (s.out_numel() == 0) {
    TS_CUDA_CHECK(cudaMemsetAsync(gx.data_ptr(), 0, total * gx.itemsize(), current_stream(dev)));
    return;
  }
  cuda_visit<kFloatSet>(gx.dtype(), "max_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_backward_kernel<T><<<grid_for(total), kThreads, 0, current_stream(dev)>>>(
        ptr<T>(gy), ptr<int64_t>(idx), ptr<T>(gx), make_geo(s), total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void cuda_avg(const Tensor& x, const Tensor& y, const PoolSpec& s) {
  const int dev = y.device().index;
  DeviceGuard guard(dev);
  const int64_t total = y.numel();
  cuda_visit<kFloatSet>(x.dtype(), "avg_pool", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_kernel<T><<<grid_for(total), kThreads, 0, current_stream(dev)>>>(ptr<T>(x), ptr<T>(y),
                                                                              make_geo(s), total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

void cuda_avg_backward(const Tensor& gy, const Tensor& gx, const PoolSpec& s) {
  const int dev = gx.device().index;
  DeviceGuard guard(dev);
  const int64_t total = gx.numel();
  if (s.out_numel() == 0) {
    TS_CUDA_CHECK(cudaMemsetAsync(gx.data_ptr(), 0, total * gx.itemsize(), current_stream(dev)));
    return;
  }
  cuda_visit<kFloatSet>(gx.dtype(), "avg_pool_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_backward_kernel<T><<<grid_for(total), kThreads, 0, current_stream(dev)>>>(
        ptr<T>(gy), ptr<T>(gx), make_geo(s), total);
  });
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

TS_REGISTER_KERNEL(max_pool_nd_stub, CUDA, &cuda_max);
TS_REGISTER_KERNEL(max_pool_nd_backward_stub, CUDA, &cuda_max_backward);
TS_REGISTER_KERNEL(avg_pool_nd_stub, CUDA, &cuda_avg);
TS_REGISTER_KERNEL(avg_pool_nd_backward_stub, CUDA, &cuda_avg_backward);

}  // namespace ts::cuda
