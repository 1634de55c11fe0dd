// Inner loops for elementwise kernels. Contiguous and scalar-operand runs get plain indexed
// loops the compiler vectorizes; other runs use byte strides. Ops are functors on the compute
// type acc_t<T> (float for float16/bfloat16).
#pragma once
#include "cpu/convert.h"
#include "iter/tensor_iter.h"

namespace ts {

// Note [SIMD clones]: the build targets baseline x86-64 (SSE2), so the contiguous loops below
// are also compiled for AVX2 and AVX-512 and picked at load time. Wider vectors keep more
// cache lines in flight, which matters most for short runs (the tiles of Note [Tiled
// iteration]). The build passes -ffp-contract=off, so no clone fuses a * b + c into an FMA:
// every clone computes the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_SIMD_CLONES
#endif

template <class T, class R, class Op>
TS_SIMD_CLONES void unary_contig(R* out, const T* in, int64_t n, const Op& op) {
  using A = acc_t<T>;
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(static_cast<A>(in[i])));
}

// kind 0: a and b contiguous; 1: b a scalar; 2: a a scalar.
template <int kind, class T, class R, class Op>
TS_SIMD_CLONES void binary_contig(R* out, const T* a, const T* b, int64_t n, const Op& op) {
  using A = acc_t<T>;
  if constexpr (kind == 0) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<R>(op(static_cast<A>(a[i]), static_cast<A>(b[i])));
  } else if constexpr (kind == 1) {
    const A bv = static_cast<A>(*b);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(static_cast<A>(a[i]), bv));
  } else {
    const A av = static_cast<A>(*a);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(av, static_cast<A>(b[i])));
  }
}

template <class T, class R, class Op>
void unary_loop(char** p, const int64_t* s, int64_t n, const Op& op) {
  using A = acc_t<T>;
  if (s[0] == sizeof(R) && s[1] == sizeof(T)) {
    unary_contig<T, R>(reinterpret_cast<R*>(p[0]), reinterpret_cast<const T*>(p[1]), n, op);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<R*>(p[0] + i * s[0]) =
        static_cast<R>(op(static_cast<A>(*reinterpret_cast<const T*>(p[1] + i * s[1]))));
}

template <class T, class R, class Op>
void binary_loop(char** p, const int64_t* s, int64_t n, const Op& op) {
  using A = acc_t<T>;
  R* out = reinterpret_cast<R*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  if (s[0] == sizeof(R)) {
    if (s[1] == sizeof(T) && s[2] == sizeof(T)) return binary_contig<0, T, R>(out, a, b, n, op);
    if (s[1] == sizeof(T) && s[2] == 0) return binary_contig<1, T, R>(out, a, b, n, op);
    if (s[1] == 0 && s[2] == sizeof(T)) return binary_contig<2, T, R>(out, a, b, n, op);
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<R*>(p[0] + i * s[0]) =
        static_cast<R>(op(static_cast<A>(*reinterpret_cast<const T*>(p[1] + i * s[1])),
                          static_cast<A>(*reinterpret_cast<const T*>(p[2] + i * s[2]))));
}

// The output element type of an op on T whose result (on acc_t<T>) has type Res: bool for
// predicates and comparisons, the real type for complex -> real ops (abs, real, imag), else T.
template <class T, class Res>
using out_elem_t =
    std::conditional_t<std::is_same_v<Res, bool>, bool,
                       std::conditional_t<is_complex_v<T> && !is_complex_v<Res>, Res, T>>;

// Runs an op over every dtype of `Set`; the output type follows out_elem_t.

template <uint32_t Set, class Op>
void run_unary(const ElementwiseIter& it, DType dt, const char* name, const Op& op) {
  visit_dtype<Set>(dt, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = out_elem_t<T, decltype(op(acc_t<T>()))>;
    it.for_each([&](char** p, const int64_t* s, int64_t n) { unary_loop<T, R>(p, s, n, op); });
  });
}

template <uint32_t Set, class Op>
void run_binary(const ElementwiseIter& it, DType dt, const char* name, const Op& op) {
  visit_dtype<Set>(dt, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = out_elem_t<T, decltype(op(acc_t<T>(), acc_t<T>()))>;
    it.for_each([&](char** p, const int64_t* s, int64_t n) { binary_loop<T, R>(p, s, n, op); });
  });
}

}  // namespace ts
