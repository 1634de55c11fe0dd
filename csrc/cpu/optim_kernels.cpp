// CPU kernels of the fused optimizer steps (ops/optim_step.h).
//
// Note [Optimizer rounding]: each kernel computes in acc_t<T> but rounds to T wherever
// PyTorch's single-tensor step materializes a tensor (the decayed gradient, the moments, the
// denominator), so float16/bfloat16 trajectories follow PyTorch's, and float32/float64 ones
// agree to the last bits (the roundings are no-ops there). Scalars enter as PyTorch's do:
// doubles computed in Python precision, cast to the compute type.
#include <algorithm>
#include <cmath>

#include "cpu/parallel.h"
#include "ops/optim_step.h"

namespace ts {
namespace {

template <class T>
inline acc_t<T> rnd(acc_t<T> v) {
  return static_cast<acc_t<T>>(static_cast<T>(v));
}

template <class T>
void sgd_one(const SgdSlot& s, const SgdHyper& h) {
  using A = acc_t<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* buf = s.buf.defined() ? s.buf.data<T>() : nullptr;
  const A neg_lr = A(-h.lr), mu = A(h.momentum), keep = A(1 - h.dampening), wd = A(h.weight_decay);
  const bool maximize = h.maximize, decay = h.weight_decay != 0, nesterov = h.nesterov,
             first = s.first;
  parallel_for(0, s.param.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      A gi = A(g[i]);
      if (maximize) gi = -gi;
      if (decay) gi = rnd<T>(gi + wd * A(p[i]));
      if (buf) {
        const A b = first ? gi : rnd<T>(rnd<T>(A(buf[i]) * mu) + keep * gi);
        buf[i] = T(b);
        gi = nesterov ? rnd<T>(gi + mu * b) : b;
      }
      p[i] = T(A(p[i]) + neg_lr * gi);
    }
  });
}

// PyTorch's lerp: exact at both ends, and the form it picks depends on the weight.
template <class A>
inline A lerp(A a, A b, A w) {
  return std::abs(w) < A(0.5) ? a + w * (b - a) : b - (b - a) * (A(1) - w);
}

template <class T>
void adam_one(const AdamSlot& s, const AdamHyper& h) {
  using A = acc_t<T>;
  T* p = s.param.data<T>();
  const T* g = s.grad.data<T>();
  T* m = s.exp_avg.data<T>();
  T* v = s.exp_avg_sq.data<T>();
  T* vmax = s.max_exp_avg_sq.defined() ? s.max_exp_avg_sq.data<T>() : nullptr;
  const double bc1 = 1 - std::pow(h.beta1, s.step), bc2 = 1 - std::pow(h.beta2, s.step);
  const A neg_step_size = A(-(h.lr / bc1)), bc2_sqrt = A(std::sqrt(bc2)), eps = A(h.eps);
  const A w1 = A(1 - h.beta1), b2 = A(h.beta2), w2 = A(1 - h.beta2), wd = A(h.weight_decay),
          shrink = A(1 - h.lr * h.weight_decay);
  const bool maximize = h.maximize, decay = h.weight_decay != 0, decoupled = h.decoupled;
  parallel_for(0, s.param.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      A gi = A(g[i]), pi = A(p[i]);
      if (maximize) gi = -gi;
      if (decay) {
        if (decoupled)
          pi = rnd<T>(pi * shrink);
        else
          gi = rnd<T>(gi + wd * pi);
      }
      const A mi = rnd<T>(lerp(A(m[i]), gi, w1));
      const A vi = rnd<T>(rnd<T>(A(v[i]) * b2) + w2 * gi * gi);
      m[i] = T(mi);
      v[i] = T(vi);
      A vs = vi;
      if (vmax) {
        vs = std::max(A(vmax[i]), vi);
        vmax[i] = T(vs);
      }
      const A denom = rnd<T>(rnd<T>(rnd<T>(std::sqrt(vs)) / bc2_sqrt) + eps);
      p[i] = T(pi + neg_step_size * mi / denom);
    }
  });
}

void cpu_sgd_step(const std::vector<SgdSlot>& slots, const SgdHyper& h) {
  for (const auto& s : slots)
    visit_dtype<kFloatSet>(s.param.dtype(), "sgd_step",
                           [&](auto tag) { sgd_one<typename decltype(tag)::type>(s, h); });
}

void cpu_adam_step(const std::vector<AdamSlot>& slots, const AdamHyper& h) {
  for (const auto& s : slots)
    visit_dtype<kFloatSet>(s.param.dtype(), "adam_step",
                           [&](auto tag) { adam_one<typename decltype(tag)::type>(s, h); });
}

}  // namespace

TS_REGISTER_KERNEL(sgd_step_stub, CPU, &cpu_sgd_step);
TS_REGISTER_KERNEL(adam_step_stub, CPU, &cpu_adam_step);

}  // namespace ts
