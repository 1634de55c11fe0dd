// CPU kernels of GELU (exact and tanh forms), forward and backward, and ReLU's backward
// (ops/nn_fused.h).
// float32 (and the 16-bit floats, through float chunks) use branch-free formulas that GCC
// vectorizes: the exact form by Note [Exact GELU in float32], the tanh form with fast::tanh_f32
// (Note [fast float32 math]); float64 uses libm.
// Unlike the elementwise library functions, these training kernels let the AVX2/AVX-512
// clones contract a * b + c into FMAs (about 2x faster): their last bit may then differ
// between CPUs, as PyTorch's do; tests compare them with tolerances. The clones are the
// x86-64-v3/v4 levels: the exact form needs FMA (x86-64-v3), which plain AVX2 does not imply.
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
#define TS_NN_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TS_NN_CLONES
#endif

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kTanhCoef = 0.044715;

// Note [Exact GELU in float32]: gelu(x) = x Phi(x) and its derivative Phi(x) + x phi(x) come
// from w = Phi(-|x|) (Phi(x) = x >= 0 ? 1 - w : w: no cancellation on either side) and
// E = exp(-x^2 / 2) = sqrt(2 pi) phi(x): w = E t P(t) with t = 1 / (1 + 0.35 |x|) and P a
// degree-8 fit of Phi(-a) e^(a^2 / 2) / t on a in [0, 15] (relative error 7.6e-8 with its
// float32 coefficients). E takes the exact a^2 = s + ds (an FMA): s = m 2 ln2 + R by
// Cody-Waite (exact), ds joins R, and exp(-R / 2) is a degree-6 fit on |R| <= ln2, so the
// tails keep their relative accuracy (a few ulp over the whole range; PyTorch's
// 0.5 x (1 + erf(x / sqrt 2)) loses every digit below x = -5). One scale 2^-m stays normal
// up to |x| = 13.2; beyond it w and E are 0 (gelu's true value there is a float32 denormal
// below 6e-39), which also makes gelu(inf) = inf and gelu(-inf) = NaN, as the float64
// formula gives; NaN passes through the final product. Per element about 25 multiply-adds.
struct GeluParts {
  float w;  // Phi(-|x|)
  float e;  // exp(-x^2 / 2)
};

inline GeluParts gelu_parts(float x) {
  const float ax = x < 0 ? -x : x;
  const float a = ax < 13.2f ? ax : 13.2f;
  const float t = 1.0f / (1.0f + 0.35f * a);
  static constexpr float kP[] = {-2.916577645e-02f, 1.440674663e-01f,  -2.559106648e-01f,
                                 1.593972743e-01f,  -2.326303907e-02f, 1.055729911e-01f,
                                 1.198162735e-01f,  1.398641914e-01f,  1.396212727e-01f};
  const float tp = t * fast::horner(t, kP);
  const float s = a * a;
  const float ds = __builtin_fmaf(a, a, -s);
  const float magic = 12582912.0f;
  const float mf = (s * 0.72134752044448170f + magic) - magic;  // round(s / (2 ln2))
  float r = mf * -1.38671875f + s;                              // exact: 2 ln2's high part
  r = mf * 4.2438888e-4f + r + ds;
  static constexpr float kQ[] = {2.158324241e-05f, -2.615213452e-04f, 2.604275709e-03f,
                                 -2.083315141e-02f, 1.249999851e-01f};
  const float pe = fast::horner(r, kQ) * (r * r) + (r * -0.5f + 1.0f);  // exp(-r / 2)
  const float scale = ax > 13.2f || ax != ax ? 0.0f : fast::pow2_bits(-static_cast<int32_t>(mf));
  const float e = pe * scale;
  return {tp * e, e};
}

TS_NN_CLONES void gelu_f32(float* out, const float* x, int64_t n, bool tanh_approx) {
  if (tanh_approx) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i];
      const float inner = float(kSqrt2OverPi) * (v + float(kTanhCoef) * v * v * v);
      out[i] = 0.5f * v * (1.0f + fast::tanh_f32(inner));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float v = x[i], w = gelu_parts(v).w;
      out[i] = v * (v >= 0 ? 1.0f - w : w);
    }
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
      const GeluParts p = gelu_parts(v);
      gx[i] = gy[i] * ((v >= 0 ? 1.0f - p.w : p.w) + v * float(kInvSqrt2Pi) * p.e);
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
