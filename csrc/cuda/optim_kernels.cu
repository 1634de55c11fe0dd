// CUDA kernels of the fused optimizer steps (ops/optim_step.h): one kernel per parameter,
// all launched from one C++ call, with the CPU kernels' arithmetic and rounding points
// (Note [Optimizer rounding] in cpu/optim_kernels.cpp).
#include <cmath>

#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/optim_step.h"

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

template <class T>
__global__ void adam_kernel(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, AdamConsts c,
                            const float* step) {
  using A = dacc_t<T>;
  if (step) device_bias_correction(step, c, c.neg_step_size, c.bc2_sqrt);
  const A sign = c.maximize ? A(-1) : A(1), w1 = A(c.w1), b2 = A(c.b2), w2 = A(c.w2), wd = A(c.wd),
          shrink = A(c.shrink), nss = A(c.neg_step_size), bc2s = A(c.bc2_sqrt), eps = A(c.eps);
  const bool small_w = (w1 < A(0) ? -w1 : w1) < A(0.5);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    A gi = dconvert<A>(g[i]) * sign, pi = dconvert<A>(p[i]);
    if (c.l2) gi = rnd<T>(gi + wd * pi);
    if (c.decoupled) pi = rnd<T>(pi * shrink);
    const A mo = dconvert<A>(m[i]);
    // PyTorch's lerp form depends on the weight (see the CPU kernel).
    const A mi = small_w ? rnd<T>(mo + w1 * (gi - mo)) : rnd<T>(gi - (gi - mo) * (A(1) - w1));
    const A vi = rnd<T>(rnd<T>(dconvert<A>(v[i]) * b2) + w2 * gi * gi);
    m[i] = dconvert<T>(mi);
    v[i] = dconvert<T>(vi);
    A vs = vi;
    if (vmax) {
      const A old = dconvert<A>(vmax[i]);
      vs = old > vi || old != old ? old : vi;
      vmax[i] = dconvert<T>(vs);
    }
    const A denom = rnd<T>(rnd<T>(rnd<T>(::cuda::std::sqrt(vs)) / bc2s) + eps);
    p[i] = dconvert<T>(pi + nss * mi / denom);
  }
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
      adam_kernel<T><<<grid_for(n, dev), kBlock, 0, st>>>(ptr<T>(s.param), ptr<T>(s.grad),
                                                          ptr<T>(s.exp_avg), ptr<T>(s.exp_avg_sq),
                                                          ptr<T>(s.max_exp_avg_sq), n, c,
                                                          ptr<float>(s.device_step));
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
