// CPU kernel for repeat: moves bytes only, so it needs no per-dtype instantiation beyond the
// element sizes.
#include <cstring>

#include "core/parallel.h"
#include "ops/manipulation.h"

namespace ts {
namespace {

// Copies `block` bytes (one element's worth of everything after the axis) `count` times.
// Fixed-size blocks (a repeat along the last axis) use typed stores instead of memcpy calls.
template <int N>
struct Chunk {
  char b[N];
};

template <int N>
char* emit_fixed(char* dst, const char* src, int64_t count) {
  Chunk<N> v;
  std::memcpy(&v, src, N);
  for (int64_t k = 0; k < count; ++k, dst += N) std::memcpy(dst, &v, N);
  return dst;
}

char* emit(char* dst, const char* src, int64_t block, int64_t count) {
  switch (block) {
    case 1:
      return emit_fixed<1>(dst, src, count);
    case 2:
      return emit_fixed<2>(dst, src, count);
    case 4:
      return emit_fixed<4>(dst, src, count);
    case 8:
      return emit_fixed<8>(dst, src, count);
    case 16:
      return emit_fixed<16>(dst, src, count);
    default:
      for (int64_t k = 0; k < count; ++k, dst += block) std::memcpy(dst, src, block);
      return dst;
  }
}

void cpu_repeat(const Tensor& out, const Tensor& src, int64_t axis, const int64_t* counts) {
  int64_t outer = 1, block = src.itemsize();
  for (int64_t d = 0; d < axis; ++d) outer *= src.dim(d);
  for (int64_t d = axis + 1; d < src.ndim(); ++d) block *= src.dim(d);
  const int64_t n = src.dim(axis), total = out.dim(axis);
  const char* in = src.data_ptr();
  char* o = out.data_ptr();
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, total * block));
  parallel_for(0, outer, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const char* s = in + i * n * block;
      char* d = o + i * total * block;
      for (int64_t j = 0; j < n; ++j) d = emit(d, s + j * block, block, counts[j]);
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(repeat_stub, CPU, &cpu_repeat);

}  // namespace ts
