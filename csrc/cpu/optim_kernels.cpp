// CPU kernels of the fused optimizer steps (ops/optim_step.h).
//
// Note [Optimizer rounding]: each kernel computes in acc_t<T> but rounds to T wherever
// PyTorch's single-tensor step materializes a tensor (the decayed gradient, the moments, the
// denominator), so float16/bfloat16 trajectories follow PyTorch's, and float32/float64 ones
// agree to the last bits (the roundings are no-ops there). Scalars enter as PyTorch's do:
// doubles computed in Python precision, cast to the compute type.
#pragma GCC optimize("no-trapping-math")  // amsgrad's max select vectorizes (flags unread)
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel.h"
#include "ops/optim_step.h"
#include "kernels/acc_type.h"

namespace ts {
namespace {

template <class T>
inline acc_t<T> rnd(acc_t<T> v) {
  return static_cast<acc_t<T>>(static_cast<T>(v));
}

// Calls f(std::true_type) or f(std::false_type): option flags become compile-time constants,
// so each option combination gets its own branch-free loop that GCC vectorizes.
template <class F>
void with_flag(bool b, const F& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

template <class T>
void sgd_one(const SgdSlot& s, const SgdHyper& h) {
  using A = acc_t<T>;
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict buf = s.buf.defined() ? s.buf.data<T>() : nullptr;
  // maximize negates through a multiplication by -1, which is exact.
  const A sign = h.maximize ? A(-1) : A(1), neg_lr = A(-h.lr), mu = A(h.momentum),
          keep = A(1 - h.dampening), wd = A(h.weight_decay);
  with_flag(h.weight_decay != 0, [&](auto decay) {
    with_flag(buf != nullptr, [&](auto momentum) {
      with_flag(h.nesterov, [&](auto nesterov) {
        with_flag(s.first, [&](auto first) {
          parallel_for(0, s.param.numel(), kGrainSize, [=](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
              const A pi = A(p[i]);
              A gi = A(g[i]) * sign;
              if constexpr (decltype(decay)::value) gi = rnd<T>(gi + wd * pi);
              if constexpr (decltype(momentum)::value) {
                A b;
                if constexpr (decltype(first)::value)
                  b = gi;
                else
                  b = rnd<T>(rnd<T>(A(buf[i]) * mu) + keep * gi);
                buf[i] = T(b);
                if constexpr (decltype(nesterov)::value)
                  gi = rnd<T>(gi + mu * b);
                else
                  gi = b;
              }
              p[i] = T(pi + neg_lr * gi);
            }
          });
        });
      });
    });
  });
}

template <class T>
void adam_one(const AdamSlot& s, const AdamHyper& h) {
  using A = acc_t<T>;
  T* __restrict p = s.param.data<T>();
  const T* __restrict g = s.grad.data<T>();
  T* __restrict m = s.exp_avg.data<T>();
  T* __restrict v = s.exp_avg_sq.data<T>();
  T* __restrict vmax = s.max_exp_avg_sq.defined() ? s.max_exp_avg_sq.data<T>() : nullptr;
  const double bc1 = 1 - std::pow(h.beta1, s.step), bc2 = 1 - std::pow(h.beta2, s.step);
  const A neg_step_size = A(-(h.lr / bc1)), bc2_sqrt = A(std::sqrt(bc2)), eps = A(h.eps);
  const A w1 = A(1 - h.beta1), b2 = A(h.beta2), w2 = A(1 - h.beta2), wd = A(h.weight_decay),
          shrink = A(1 - h.lr * h.weight_decay), sign = h.maximize ? A(-1) : A(1);
  const bool decay = h.weight_decay != 0;
  with_flag(decay && !h.decoupled, [&](auto l2) {
    with_flag(decay && h.decoupled, [&](auto decoupled) {
      with_flag(vmax != nullptr, [&](auto amsgrad) {
        // PyTorch's lerp picks its form by the weight: a + w (b - a) below 0.5, else
        // b - (b - a)(1 - w).
        with_flag(std::abs(w1) < A(0.5), [&](auto small_w) {
          parallel_for(0, s.param.numel(), kGrainSize, [=](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) {
              A gi = A(g[i]) * sign, pi = A(p[i]);
              if constexpr (decltype(l2)::value) gi = rnd<T>(gi + wd * pi);
              if constexpr (decltype(decoupled)::value) pi = rnd<T>(pi * shrink);
              const A mo = A(m[i]);
              A mi;
              if constexpr (decltype(small_w)::value)
                mi = rnd<T>(mo + w1 * (gi - mo));
              else
                mi = rnd<T>(gi - (gi - mo) * (A(1) - w1));
              const A vi = rnd<T>(rnd<T>(A(v[i]) * b2) + w2 * gi * gi);
              m[i] = T(mi);
              v[i] = T(vi);
              A vs = vi;
              if constexpr (decltype(amsgrad)::value) {
                const A old = A(vmax[i]);
                vs = old > vi || old != old ? old : vi;  // torch.maximum: NaN propagates
                vmax[i] = T(vs);
              }
              const A denom = rnd<T>(rnd<T>(rnd<T>(std::sqrt(vs)) / bc2_sqrt) + eps);
              p[i] = T(pi + neg_step_size * mi / denom);
            }
          });
        });
      });
    });
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
