// CPU kernels of the fused pointwise activations (ops/nn/activation_fused.h), forward and
// backward, from the scalar formulas shared with CUDA (kernels/activation_math.h).
// float32 (and the 16-bit floats, through float chunks) take exp, tanh, expm1 and log1p from
// fast_math_scalar.h (Note [fast float32 math]) so GCC vectorizes the loops; float64
// uses libm. As in nn_act_kernels.cpp, the AVX2/AVX-512 clones may contract a * b + c into
// FMAs: the last bit can differ between CPUs, as PyTorch's does.
#pragma GCC optimize("no-trapping-math", "fp-contract=fast")
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel.h"
#include "cpu/fast_math_scalar.h"
#include "cpu/float_chunks.h"
#include "ops/nn/activation_fused.h"

namespace ts {
namespace {

using act::Act;
using act::ActParams;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(TESSERA_NO_SIMD_CLONES)
#define TS_ACT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_ACT_CLONES
#endif

struct FloatMath {
  static float exp(float v) { return fast::exp_f32(v); }
  static float tanh(float v) { return fast::tanh_f32(v); }
  static float log1p(float v) { return fast::log1p_f32(v); }  // v >= 0 here (of an exp)
  static float expm1(float v) { return fast::expm1_f32(v); }
};
struct DoubleMath {
  static double exp(double v) { return std::exp(v); }
  static double tanh(double v) { return std::tanh(v); }
  static double log1p(double v) { return std::log1p(v); }
  static double expm1(double v) { return std::expm1(v); }
};

template <Act K>
TS_ACT_CLONES void forward_f32(float* out, const float* x, int64_t n, float a, float b, float c) {
  for (int64_t i = 0; i < n; ++i) out[i] = act::value<K, FloatMath>(x[i], a, b, c);
}

template <Act K>
TS_ACT_CLONES void backward_f32(float* gx, const float* x, const float* gy, int64_t n, float a,
                                float b, float c) {
  for (int64_t i = 0; i < n; ++i) gx[i] = act::grad<K, FloatMath>(x[i], gy[i], a, b, c);
}

template <Act K, class T>
void forward_any(const Tensor& x, const Tensor& out, const ActParams& p) {
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  parallel_for(0, x.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = lo; i < hi; ++i) op[i] = act::value<K, DoubleMath>(xp[i], p.a, p.b, p.c);
    } else if constexpr (std::is_same_v<T, float>) {
      forward_f32<K>(op + lo, xp + lo, hi - lo, float(p.a), float(p.b), float(p.c));
    } else {
      float_chunks(op, xp, lo, hi, [&](float* r, const float* a, int64_t m) {
        forward_f32<K>(r, a, m, float(p.a), float(p.b), float(p.c));
      });
    }
  });
}

template <Act K, class T>
void backward_any(const Tensor& x, const Tensor& gy, const Tensor& gx, const ActParams& p) {
  const T *xp = x.data<T>(), *gp = gy.data<T>();
  T* op = gx.data<T>();
  parallel_for(0, x.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = lo; i < hi; ++i)
        op[i] = act::grad<K, DoubleMath>(xp[i], gp[i], p.a, p.b, p.c);
    } else if constexpr (std::is_same_v<T, float>) {
      backward_f32<K>(op + lo, xp + lo, gp + lo, hi - lo, float(p.a), float(p.b), float(p.c));
    } else {
      float_chunks(op, xp, gp, lo, hi, [&](float* r, const float* a, const float* g, int64_t m) {
        backward_f32<K>(r, a, g, m, float(p.a), float(p.b), float(p.c));
      });
    }
  });
}

void cpu_activation(const Tensor& x, const Tensor& out, const ActParams& p) {
  act::visit_kind(p.kind, [&](auto k) {
    visit_dtype<kFloatSet>(x.dtype(), "activation", [&](auto tag) {
      forward_any<decltype(k)::value, typename decltype(tag)::type>(x, out, p);
    });
  });
}

void cpu_activation_backward(const Tensor& x, const Tensor& gy, const Tensor& gx,
                             const ActParams& p) {
  act::visit_kind(p.kind, [&](auto k) {
    visit_dtype<kFloatSet>(x.dtype(), "activation_backward", [&](auto tag) {
      backward_any<decltype(k)::value, typename decltype(tag)::type>(x, gy, gx, p);
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(activation_stub, CPU, &cpu_activation);
TS_REGISTER_KERNEL(activation_backward_stub, CPU, &cpu_activation_backward);

}  // namespace ts
