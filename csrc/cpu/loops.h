// Inner loops for elementwise kernels. Contiguous and scalar-operand runs get plain indexed
// loops the compiler vectorizes; other runs use byte strides. Ops are functors on the compute
// type acc_t<T> (float for float16/bfloat16).
#pragma once
#include "cpu/convert.h"
#include "iter/tensor_iter.h"

namespace ts {

template <class T, class R, class Op>
void unary_loop(char** p, const int64_t* s, int64_t n, const Op& op) {
  using A = acc_t<T>;
  if (s[0] == sizeof(R) && s[1] == sizeof(T)) {
    R* out = reinterpret_cast<R*>(p[0]);
    const T* in = reinterpret_cast<const T*>(p[1]);
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(static_cast<A>(in[i])));
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
    if (s[1] == sizeof(T) && s[2] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<R>(op(static_cast<A>(a[i]), static_cast<A>(b[i])));
      return;
    }
    if (s[1] == sizeof(T) && s[2] == 0) {
      const A bv = static_cast<A>(*b);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(static_cast<A>(a[i]), bv));
      return;
    }
    if (s[1] == 0 && s[2] == sizeof(T)) {
      const A av = static_cast<A>(*a);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(op(av, static_cast<A>(b[i])));
      return;
    }
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
