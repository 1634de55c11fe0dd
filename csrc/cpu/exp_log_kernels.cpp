// CPU kernels for exp, log and their relatives, sqrt and reciprocal (float, complex).
#include "cpu/fast_math.h"
#include "cpu/loops.h"
#include "kernels/scalar_math.h"
#include "ops/math.h"

namespace ts {
namespace {

// Runs array_fn over one run of T (float32, float16 or bfloat16) through a float buffer.
template <class T, class ArrayFn>
void buffered_run(char** p, const int64_t* s, int64_t n, ArrayFn array_fn) {
  constexpr int64_t kBuf = 256;
  float buf[kBuf];
  for (int64_t i0 = 0; i0 < n; i0 += kBuf) {
    const int64_t m = std::min(kBuf, n - i0);
    for (int64_t i = 0; i < m; ++i)
      buf[i] = static_cast<float>(*reinterpret_cast<const T*>(p[1] + (i0 + i) * s[1]));
    array_fn(buf, buf, m);
    for (int64_t i = 0; i < m; ++i)
      *reinterpret_cast<T*>(p[0] + (i0 + i) * s[0]) = static_cast<T>(buf[i]);
  }
}

// float32 and its 16-bit storage types go to the vectorized float32 array form (Note [fast
// float32 math]): contiguous float32 runs directly, every other run through a small float
// buffer, so every layout gets the same bits (16-bit types round that float32 result once).
// float64 and complex use `op`.
template <class ArrayFn, class Op>
void run_fast_f32(const ElementwiseIter& it, DType dt, const char* name, ArrayFn array_fn,
                  const Op& op) {
  if (dt == DType::Float32) {
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      if (s[0] == 4 && s[1] == 4)
        return array_fn(reinterpret_cast<float*>(p[0]), reinterpret_cast<const float*>(p[1]), n);
      buffered_run<float>(p, s, n, array_fn);
    });
  } else if (dt == DType::Float16) {
    it.for_each(
        [&](char** p, const int64_t* s, int64_t n) { buffered_run<Half>(p, s, n, array_fn); });
  } else if (dt == DType::BFloat16) {
    it.for_each(
        [&](char** p, const int64_t* s, int64_t n) { buffered_run<BFloat16>(p, s, n, array_fn); });
  } else {
    run_unary<kInexactSet>(it, dt, name, op);
  }
}

void exp_kernel(const ElementwiseIter& it, DType dt) {
  run_fast_f32(it, dt, "exp", &fast::exp_f32_array, [](auto a) { return std::exp(a); });
}
void expm1_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "expm1", [](auto a) {
    if constexpr (is_complex_v<decltype(a)>)
      return scalar::complex_expm1(a);
    else
      return std::expm1(a);
  });
}
void log_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "log", [](auto a) { return std::log(a); });
}
void log1p_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "log1p", [](auto a) {
    if constexpr (is_complex_v<decltype(a)>)
      return scalar::complex_log1p(a);
    else
      return std::log1p(a);
  });
}
void log2_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "log2", [](auto a) {
    if constexpr (is_complex_v<decltype(a)>)
      return scalar::complex_log2(a);
    else
      return std::log2(a);
  });
}
void log10_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "log10", [](auto a) { return std::log10(a); });
}
void sqrt_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "sqrt", [](auto a) { return std::sqrt(a); });
}
void reciprocal_kernel(const ElementwiseIter& it, DType dt) {
  run_unary<kInexactSet>(it, dt, "reciprocal", [](auto a) { return decltype(a)(1) / a; });
}
void tanh_kernel(const ElementwiseIter& it, DType dt) {
  run_fast_f32(it, dt, "tanh", &fast::tanh_f32_array, [](auto a) { return std::tanh(a); });
}

}  // namespace

TS_REGISTER_KERNEL(exp_stub, CPU, &exp_kernel);
TS_REGISTER_KERNEL(expm1_stub, CPU, &expm1_kernel);
TS_REGISTER_KERNEL(log_stub, CPU, &log_kernel);
TS_REGISTER_KERNEL(log1p_stub, CPU, &log1p_kernel);
TS_REGISTER_KERNEL(log2_stub, CPU, &log2_kernel);
TS_REGISTER_KERNEL(log10_stub, CPU, &log10_kernel);
TS_REGISTER_KERNEL(sqrt_stub, CPU, &sqrt_kernel);
TS_REGISTER_KERNEL(reciprocal_stub, CPU, &reciprocal_kernel);
TS_REGISTER_KERNEL(tanh_stub, CPU, &tanh_kernel);

}  // namespace ts
