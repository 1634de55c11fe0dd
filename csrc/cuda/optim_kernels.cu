// CUDA kernels of the fused optimizer steps (ops/optim_step.h): one kernel per parameter,
// all launched from one C++ call, with the CPU kernels' arithmetic and rounding points
// (Note [Optimizer rounding] in cpu/optim_kernels.cpp).
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/optim_step.h"
#include "kernels/acc_type.h"

namespace ts::cuda {
namespace {

template <class T>
__device__ __forceinline__ dacc_t<T> rnd(dacc_t<T> v) {
  return dconvert<dacc_t<T>>(dconvert<T>(v));
}

template <class T>
__global__ void sgd_kernel(T* p, const T* g, T* buf, int64_t n, double lr, double mu,
                           double dampening, double wd, bool nesterov, bool maximize, bool first) {
  using A = dacc_t<T>;
  const A sign = maximize ? A(-1) : A(1), neg_lr = A(-lr), m = A(mu), keep = A(1 - dampening),
          w = A(wd);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const A pi = dconvert<A>(p[i]);
    A gi = dconvert<A>(g[i]) * sign;
    if (wd != 0) gi = rnd<T>(gi + w * pi);
    if (buf) {
      const A b = first ? gi : rnd<T>(rnd<T>(dconvert<A>(buf[i]) * m) + keep * gi);
      buf[i] = dconvert<T>(b);
      gi = nesterov ? rnd<T>(gi + m * b) : b;
    }
    p[i] = dconvert<T>(pi + neg_lr * gi);
  }
}

struct AdamConsts {
  double neg_step_size, bc2_sqrt, eps, w1, b2, w2, wd, shrink;
  double lr, beta1;  // for the bias corrections of a count on the device
  bool l2, decoupled, maximize;
};

// The bias-corrected constants from the count on the device (capturable steps): the host's
// formulas with this update's count, old + 1.
__device__ __forceinline__ void device_bias_correction(const float* step, const AdamConsts& c,
                                                       double& neg_step_size, double& bc2_sqrt) {
  const double t = static_cast<double>(*step) + 1;
  const double bc1 = 1 - ::pow(c.beta1, t), bc2 = 1 - ::pow(c.b2, t);
  neg_step_size = -(c.lr / bc1);
  bc2_sqrt = ::sqrt(bc2);
}

// After every parameter's kernel has read it: the count of a capturable step, old + 1.
__global__ void bump_step(float* step) { *step += 1.f; }

// One element's update (the CPU kernel's arithmetic and rounding points).
template <class T>
struct AdamElem {
  using A = dacc_t<T>;
  A sign, w1, b2, w2, wd, shrink, nss, bc2s, eps;
  bool small_w, l2, decoupled;
  __device__ __forceinline__ void operator()(T& p, T g, T& m, T& v, T* vmax) const {
    A gi = dconvert<A>(g) * sign, pi = dconvert<A>(p);
    if (l2) gi = rnd<T>(gi + wd * pi);
    if (decoupled) pi = rnd<T>(pi * shrink);
    const A mo = dconvert<A>(m);
    // PyTorch's lerp form depends on the weight (see the CPU kernel).
    const A mi = small_w ? rnd<T>(mo + w1 * (gi - mo)) : rnd<T>(gi - (gi - mo) * (A(1) - w1));
    const A vi = rnd<T>(rnd<T>(dconvert<A>(v) * b2) + w2 * gi * gi);
    m = dconvert<T>(mi);
    v = dconvert<T>(vi);
    A vs = vi;
    if (vmax) {
      const A old = dconvert<A>(*vmax);
      vs = old > vi || old != old ? old : vi;
      *vmax = dconvert<T>(vs);
    }
    const A denom = rnd<T>(rnd<T>(rnd<T>(::cuda::std::sqrt(vs)) / bc2s) + eps);
    p = dconvert<T>(pi + nss * mi / denom);
  }
};

// Note [Vectorized optimizer kernels]: when every operand is 16-byte aligned, each thread moves
// 16 bytes of each (4 float32, 8 bfloat16) per load and store, as PyTorch's multi-tensor
// kernels do; the elementwise arithmetic is the scalar path's, element by element.
template <class T>
__global__ void adam_kernel(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, AdamConsts c,
                            const float* step, bool aligned) {
  using A = dacc_t<T>;
  if (step) device_bias_correction(step, c, c.neg_step_size, c.bc2_sqrt);
  AdamElem<T> f;
  f.sign = c.maximize ? A(-1) : A(1);
  f.w1 = A(c.w1), f.b2 = A(c.b2), f.w2 = A(c.w2), f.wd = A(c.wd), f.shrink = A(c.shrink);
  f.nss = A(c.neg_step_size), f.bc2s = A(c.bc2_sqrt), f.eps = A(c.eps);
  f.small_w = (f.w1 < A(0) ? -f.w1 : f.w1) < A(0.5);
  f.l2 = c.l2, f.decoupled = c.decoupled;
  constexpr int V = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
  using Vec = VecT<T, V>;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t nv = aligned ? n / V : 0;
  for (int64_t j = tid; j < nv; j += stride) {
    Vec P = reinterpret_cast<Vec*>(p)[j], G = reinterpret_cast<const Vec*>(g)[j],
        M = reinterpret_cast<Vec*>(m)[j], W = reinterpret_cast<Vec*>(v)[j], X;
    if (vmax) X = reinterpret_cast<Vec*>(vmax)[j];
#pragma unroll
    for (int k = 0; k < V; ++k) f(P.v[k], G.v[k], M.v[k], W.v[k], vmax ? &X.v[k] : nullptr);
    reinterpret_cast<Vec*>(p)[j] = P;
    reinterpret_cast<Vec*>(m)[j] = M;
    reinterpret_cast<Vec*>(v)[j] = W;
    if (vmax) reinterpret_cast<Vec*>(vmax)[j] = X;
  }
  for (int64_t i = nv * V + tid; i < n; i += stride)
    f(p[i], g[i], m[i], v[i], vmax ? vmax + i : nullptr);
}

bool aligned16(std::initializer_list<const void*> ps) {
  for (const void* q : ps)
    if (q && reinterpret_cast<uintptr_t>(q) % 16 != 0) return false;
  return true;
}

unsigned grid_for(int64_t n, int dev) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, sm_count(dev) * 8)));
}

template <class T>
T* ptr(const Tensor& t) {
  return t.defined() ? reinterpret_cast<T*>(t.data_ptr()) : nullptr;
}

void sgd_cuda(const std::vector<SgdSlot>& slots, const SgdHyper& h) {
  for (const auto& s : slots) {
    const int dev = s.param.device().index;
    cudaStream_t st = current_stream(dev);
    cuda_visit<kFloatSet>(s.param.dtype(), "sgd_step", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = s.param.numel();
      if (n == 0) return;
      sgd_kernel<T><<<grid_for(n, dev), kBlock, 0, st>>>(
          ptr<T>(s.param), ptr<T>(s.grad), ptr<T>(s.buf), n, h.lr, h.momentum, h.dampening,
          h.weight_decay, h.nesterov, h.maximize, s.first);
      TS_CUDA_CHECK_LAUNCH();
    });
  }
}

void adam_cuda(const std::vector<AdamSlot>& slots, const AdamHyper& h) {
  for (const auto& s : slots) {
    const int dev = s.param.device().index;
    cudaStream_t st = current_stream(dev);
    const double bc1 = 1 - std::pow(h.beta1, s.step), bc2 = 1 - std::pow(h.beta2, s.step);
    const bool decay = h.weight_decay != 0;
    const AdamConsts c{-(h.lr / bc1),
                       std::sqrt(bc2),
                       h.eps,
                       1 - h.beta1,
                       h.beta2,
                       1 - h.beta2,
                       h.weight_decay,
                       1 - h.lr * h.weight_decay,
                       h.lr,
                       h.beta1,
                       decay && !h.decoupled,
                       decay && h.decoupled,
                       h.maximize};
    cuda_visit<kFloatSet>(s.param.dtype(), "adam_step", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const int64_t n = s.param.numel();
      if (n == 0) return;
      T *P = ptr<T>(s.param), *G = ptr<T>(s.grad), *M = ptr<T>(s.exp_avg),
        *W = ptr<T>(s.exp_avg_sq), *X = ptr<T>(s.max_exp_avg_sq);
      const bool al = aligned16({P, G, M, W, X});
      constexpr int64_t V = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
      adam_kernel<T><<<grid_for(al ? (n + V - 1) / V : n, dev), kBlock, 0, st>>>(
          P, G, M, W, X, n, c, ptr<float>(s.device_step), al);
      TS_CUDA_CHECK_LAUNCH();
    });
    if (s.device_step.defined()) {
      bump_step<<<1, 1, 0, st>>>(ptr<float>(s.device_step));
      TS_CUDA_CHECK_LAUNCH();
    }
  }
}

}  // namespace

TS_REGISTER_KERNEL(sgd_step_stub, CUDA, &sgd_cuda);
TS_REGISTER_KERNEL(adam_step_stub, CUDA, &adam_cuda);

}  // namespace ts::cuda
