// CPU kernels for repeat and for concat / stack of contiguous inputs: they move bytes only, so
// they need no per-dtype instantiation beyond the element sizes.
#include <cstring>

#include "core/parallel.h"
#include "core/small_vec.h"
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

// The output's bytes split into equal ranges across threads (a join along axis 0 has one row);
// each range starts at its row and input and copies block pieces up to its end.
void cpu_join(const Tensor& out, const std::vector<Tensor>& xs, int64_t outer) {
  const int64_t k = static_cast<int64_t>(xs.size());
  SmallVec<int64_t, 8> block(k);
  SmallVec<const char*, 8> src(k);
  int64_t row = 0;
  for (int64_t i = 0; i < k; ++i) {
    block[i] = xs[i].nbytes() / outer;
    src[i] = xs[i].data_ptr();
    row += block[i];
  }
  char* o = out.data_ptr();
  parallel_for(0, row * outer, 1 << 18, [&](int64_t b, int64_t e) {
    int64_t r = b / row, off = b % row, i = 0;
    for (; off >= block[i]; ++i) off -= block[i];
    while (b < e) {
      const int64_t n = std::min(block[i] - off, e - b);
      if (n > 0) std::memcpy(o + b, src[i] + r * block[i] + off, n);
      b += n;
      off = 0;
      if (++i == k) i = 0, ++r;
    }
  });
}

}  // namespace

TS_REGISTER_KERNEL(repeat_stub, CPU, &cpu_repeat);
TS_REGISTER_KERNEL(join_stub, CPU, &cpu_join);

}  // namespace ts
