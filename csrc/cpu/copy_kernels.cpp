// CPU copy/cast and fill kernels.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/convert.h"
#include "ops/copy.h"

namespace ts {
namespace {

template <class D, class S>
void cast_loop(char** p, const int64_t* s, int64_t n) {
  if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
    D* out = reinterpret_cast<D*>(p[0]);
    const S* in = reinterpret_cast<const S*>(p[1]);
    if constexpr (std::is_same_v<D, S>) {
      std::memcpy(out, in, n * sizeof(D));
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = convert<D, S>(in[i]);
    }
    return;
  }
  if (s[1] == 0) {
    const D v = convert<D, S>(*reinterpret_cast<const S*>(p[1]));
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<D*>(p[0] + i * s[0]) = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    *reinterpret_cast<D*>(p[0] + i * s[0]) =
        convert<D, S>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
}

// Same-type copies only move bytes: dispatch on the item size, not the dtype.
// An unsigned integer (or pair) of N bytes: the value a broadcast copy repeats.
template <int N>
struct Bytes {
  using type = std::conditional_t<
      N == 1, uint8_t,
      std::conditional_t<N == 2, uint16_t, std::conditional_t<N == 4, uint32_t, uint64_t>>>;
};

template <int N>
void bytes_loop(char** p, const int64_t* s, int64_t n) {
  if (s[0] == N && s[1] == N) {
    std::memcpy(p[0], p[1], n * N);
    return;
  }
  if (s[0] == N && s[1] == 0 && N <= 8) {  // a broadcast source (expand): a fill, vectorized
    using U = typename Bytes<N>::type;
    U v;
    std::memcpy(&v, p[1], sizeof(U));
    U* out = reinterpret_cast<U*>(p[0]);
    for (int64_t i = 0; i < n; ++i) out[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(p[0] + i * s[0], p[1] + i * s[1], N);
}

void cpu_copy(const ElementwiseIter& it, DType dst, DType src) {
  if (dst == src && it.transposing_copy()) return it.transpose_copy();
  if (dst == src) {
    switch (itemsize(dst)) {
      case 1:
        it.for_each(bytes_loop<1>);
        return;
      case 2:
        it.for_each(bytes_loop<2>);
        return;
      case 4:
        it.for_each(bytes_loop<4>);
        return;
      case 8:
        it.for_each(bytes_loop<8>);
        return;
      default:
        it.for_each(bytes_loop<16>);
        return;
    }
  }
  visit_dtype<kAllSet>(dst, "astype", [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    visit_dtype<kAllSet>(src, "astype", [&](auto stag) {
      using S = typename decltype(stag)::type;
      it.for_each(cast_loop<D, S>);
    });
  });
}

void cpu_fill(const Tensor& dst, const Scalar& value) {
  visit_dtype<kAllSet>(dst.dtype(), "fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    if (dst.is_contiguous()) {
      T* p = dst.data<T>();
      parallel_for(0, dst.numel(), kGrainSize, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) p[i] = v;
      });
      return;
    }
    auto it = ElementwiseIter::make(dst, {}, "fill");
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(copy_stub, CPU, &cpu_copy);
TS_REGISTER_KERNEL(fill_stub, CPU, &cpu_fill);

}  // namespace ts
