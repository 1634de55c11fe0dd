// Inner loops for elementwise kernels. Contiguous and scalar-operand runs get plain indexed
// loops the compiler vectorizes; other runs use byte strides. Ops are functors on the compute
// type acc_t<T> (float for float16/bfloat16).
#pragma once
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <type_traits>

#include "cpu/convert.h"
#include "cpu/simd_clones.h"
#include "iter/tensor_iter.h"
#include "kernels/acc_type.h"

namespace ts {

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

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define TS_STREAM_STORES 1
// binary_contig<0> writing `out` with non-temporal 64-byte stores (Note [Streaming tile
// stores]): plain stores up to the first 64-byte boundary, then whole lines computed into a
// register-sized block and streamed, then plain stores for the rest. Same values as
// binary_contig: only where they are stored differs.
template <class T, class R, class Op>
__attribute__((target("avx512f"))) void binary_contig_stream(R* out, const T* a, const T* b,
                                                             int64_t n, const Op& op) {
  using A = acc_t<T>;
  constexpr int64_t kLine = 64 / sizeof(R);
  auto at = [&](int64_t i) {
    return static_cast<R>(op(static_cast<A>(a[i]), static_cast<A>(b[i])));
  };
  int64_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(out + i) % 64 != 0; ++i) out[i] = at(i);
  for (; i + kLine <= n; i += kLine) {
    alignas(64) R line[kLine];
    // Not unrolled before the vectorizer sees it: unrolled, it came out as scalar adds.
#pragma GCC unroll 1
    for (int64_t k = 0; k < kLine; ++k) line[k] = at(i + k);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i),
                        _mm512_load_si512(reinterpret_cast<const __m512i*>(line)));
  }
  for (; i < n; ++i) out[i] = at(i);
}

// Whether the runs of a loop may stream their float32/float64 stores: the iterator asked for
// it and the CPU has AVX-512.
inline bool stream_run(const int64_t* s) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return (s[kRunFlags] & kStreamStores) && avx512;
}
#endif

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
#if defined(TS_STREAM_STORES)
    if constexpr (std::is_same_v<R, float> || std::is_same_v<R, double>) {
      if (s[1] == sizeof(T) && s[2] == sizeof(T) && stream_run(s))
        return binary_contig_stream<T, R>(out, a, b, n, op);
    }
#endif
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
