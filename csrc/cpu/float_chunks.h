// The float32 loops of the fused nn kernels serve float16/bfloat16 too: elements [lo, hi) are
// converted to float in chunks on the stack, run through the float32 loop, and converted back.
#pragma once
#include <algorithm>
#include <cstdint>

namespace ts {

constexpr int64_t kFloatChunk = 1024;

// f(float* out, const float* a, int64_t m) over a[lo, hi) -> out[lo, hi).
template <class T, class F>
void float_chunks(T* out, const T* a, int64_t lo, int64_t hi, F f) {
  float x[kFloatChunk], r[kFloatChunk];
  for (int64_t s = lo; s < hi; s += kFloatChunk) {
    const int64_t m = std::min(kFloatChunk, hi - s);
    for (int64_t i = 0; i < m; ++i) x[i] = float(a[s + i]);
    f(r, x, m);
    for (int64_t i = 0; i < m; ++i) out[s + i] = T(r[i]);
  }
}

// f(float* out, const float* a, const float* b, int64_t m) over two inputs.
template <class T, class F>
void float_chunks(T* out, const T* a, const T* b, int64_t lo, int64_t hi, F f) {
  float x[kFloatChunk], y[kFloatChunk], r[kFloatChunk];
  for (int64_t s = lo; s < hi; s += kFloatChunk) {
    const int64_t m = std::min(kFloatChunk, hi - s);
    for (int64_t i = 0; i < m; ++i) {
      x[i] = float(a[s + i]);
      y[i] = float(b[s + i]);
    }
    f(r, x, y, m);
    for (int64_t i = 0; i < m; ++i) out[s + i] = T(r[i]);
  }
}

}  // namespace ts
