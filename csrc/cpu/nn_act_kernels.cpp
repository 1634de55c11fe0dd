// CPU kernels of GELU (exact and tanh forms), forward and backward, and ReLU's backward
// (ops/nn_fused.h).
// float32 (and the 16-bit floats, through float chunks) use branch-free formulas that GCC
// vectorizes: erfc from Numerical Recipes' erfcc fit, relative error < 1.2e-7 in exact
// arithmetic, evaluated with fast::exp_f32 (Note [fast float32 math]); float64 uses libm.
// Unlike the elementwise library functions, these training kernels let the AVX2/AVX-512
// clones contract a * b + c into FMAs (about 2x faster): their last bit may then differ
// between CPUs, as PyTorch's do; tests compare them with tolerances.
#pragma GCC optimize("no-trapping-math", "fp-contract=fast")
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel.h"
#include "cpu/fast_math_scalar.h"
#include "cpu/float_chunks.h"
#include "kernels/acc_type.h"
#include "ops/nn_fused.h"

namespace ts {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(TESSERA_NO_SIMD_CLONES)
#define TS_NN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_NN_CLONES
#endif

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCoef = 0.044715;

inline float erfc_f32(float v) {
  const float z = v < 0 ? -v : v;
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t + -0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t + -1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t + -0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t + -1.26551223f;
  const float y = t * fast::exp_f32(p - z * z);
  return v >= 0 ? y : 2.0f - y;
}

TS_NN_CLONES void gelu_f32(float* out, const float* x, int64_t n, bool tanh_approx) {
  if (tanh_approx) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i];
      const float inner = float(kSqrt2OverPi) * (v + float(kTanhCoef) * v * v * v);
      out[i] = 0.5f * v * (1.0f + fast::tanh_f32(inner));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * x[i] * erfc_f32(x[i] * -float(kSqrt1_2));
  }
}

TS_NN_CLONES void gelu_backward_f32(float* gx, const float* x, const float* gy, int64_t n,
                                    bool tanh_approx) {
  if (tanh_approx) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i], v2 = v * v;
      const float th = fast::tanh_f32(float(kSqrt2OverPi) * (v + float(kTanhCoef) * v2 * v));
      const float d = 0.5f * (1.0f + th) + 0.5f * v * (1.0f - th * th) * float(kSqrt2OverPi) *
                                               (1.0f + 3.0f * float(kTanhCoef) * v2);
      gx[i] = gy[i] * d;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i];
      const float cdf = 0.5f * erfc_f32(v * -float(kSqrt1_2));
      const float pdf = fast::exp_f32(-0.5f * v * v) * float(kInvSqrt2Pi);
      gx[i] = gy[i] * (cdf + v * pdf);
    }
  }
}

double gelu_f64(double v, bool tanh_approx) {
  if (tanh_approx) return 0.5 * v * (1 + std::tanh(kSqrt2OverPi * (v + kTanhCoef * v * v * v)));
  return 0.5 * v * std::erfc(-v * kSqrt1_2);
}

double gelu_grad_f64(double v, bool tanh_approx) {
  if (tanh_approx) {
    const double th = std::tanh(kSqrt2OverPi * (v + kTanhCoef * v * v * v));
    return 0.5 * (1 + th) + 0.5 * v * (1 - th * th) * kSqrt2OverPi * (1 + 3 * kTanhCoef * v * v);
  }
  return 0.5 * std::erfc(-v * kSqrt1_2) + v * std::exp(-0.5 * v * v) * kInvSqrt2Pi;
}

template <class T>
void gelu_any(const Tensor& x, const Tensor& out, bool tanh_approx) {
  const T* xp = x.data<T>();
  T* op = out.data<T>();
  const int64_t n = x.numel();
  parallel_for(0, n, kGrainSize, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = lo; i < hi; ++i) op[i] = gelu_f64(xp[i], tanh_approx);
    } else if constexpr (std::is_same_v<T, float>) {
      gelu_f32(op + lo, xp + lo, hi - lo, tanh_approx);
    } else {
      float_chunks(op, xp, lo, hi,
                   [&](float* r, const float* a, int64_t m) { gelu_f32(r, a, m, tanh_approx); });
    }
  });
}

template <class T>
void gelu_backward_any(const Tensor& x, const Tensor& gy, const Tensor& gx, bool tanh_approx) {
  const T *xp = x.data<T>(), *gp = gy.data<T>();
  T* op = gx.data<T>();
  const int64_t n = x.numel();
  parallel_for(0, n, kGrainSize, [&](int64_t lo, int64_t hi) {
    if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = lo; i < hi; ++i) op[i] = gp[i] * gelu_grad_f64(xp[i], tanh_approx);
    } else if constexpr (std::is_same_v<T, float>) {
      gelu_backward_f32(op + lo, xp + lo, gp + lo, hi - lo, tanh_approx);
    } else {
      float_chunks(op, xp, gp, lo, hi, [&](float* r, const float* a, const float* g, int64_t m) {
        gelu_backward_f32(r, a, g, m, tanh_approx);
      });
    }
  });
}

void cpu_gelu(const Tensor& x, const Tensor& out, bool tanh_approx) {
  visit_dtype<kFloatSet>(x.dtype(), "gelu", [&](auto tag) {
    gelu_any<typename decltype(tag)::type>(x, out, tanh_approx);
  });
}

void cpu_gelu_backward(const Tensor& x, const Tensor& gy, const Tensor& gx, bool tanh_approx) {
  visit_dtype<kFloatSet>(x.dtype(), "gelu_backward", [&](auto tag) {
    gelu_backward_any<typename decltype(tag)::type>(x, gy, gx, tanh_approx);
  });
}

template <class T>
void relu_backward_any(const Tensor& y, const Tensor& gy, const Tensor& gx) {
  const T* __restrict yp = y.data<T>();
  const T* __restrict gp = gy.data<T>();
  T* __restrict op = gx.data<T>();
  parallel_for(0, y.numel(), kGrainSize, [=](int64_t lo, int64_t hi) {
    // Both loads unconditional: the select becomes a blend, not an unpredictable branch.
    for (int64_t i = lo; i < hi; ++i) {
      const T g = gp[i];
      op[i] = acc_t<T>(yp[i]) <= 0 ? T(0) : g;
    }
  });
}

void cpu_relu_backward(const Tensor& y, const Tensor& gy, const Tensor& gx) {
  visit_dtype<kFloatSet>(y.dtype(), "relu_backward", [&](auto tag) {
    relu_backward_any<typename decltype(tag)::type>(y, gy, gx);
  });
}

}  // namespace

TS_REGISTER_KERNEL(relu_backward_stub, CPU, &cpu_relu_backward);
TS_REGISTER_KERNEL(gelu_stub, CPU, &cpu_gelu);
TS_REGISTER_KERNEL(gelu_backward_stub, CPU, &cpu_gelu_backward);

}  // namespace ts
