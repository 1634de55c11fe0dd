// Overflow-free geometry of one sliding window along one dim (pooling, convolution windows),
// usable from CPU and CUDA kernels. The sizes were checked by the op (Note [Checked size
// arithmetic]): reach = (k - 1) d + 1 and the padded extent n + 2 p fit int64, start = o s - p
// lies in [-p, n + p). What these avoid: a loop `while (start < 0) start += d` that runs p / d
// times (2^61 iterations for a padding of 2^61: a hang), and start + reach overflowing.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define TS_WINDOW_HD __host__ __device__
#else
#define TS_WINDOW_HD
#endif

namespace ts {

// The first tap start + j d (j >= 0) that is >= 0, for d > 0.
TS_WINDOW_HD inline int64_t window_first_tap(int64_t start, int64_t d) {
  return start >= 0 ? start : (d - 1) - ((-(start + 1)) % d);
}
// min(start + reach, n) for reach > 0, start < n + reach, without computing start + reach when it
// would pass n.
TS_WINDOW_HD inline int64_t window_end(int64_t start, int64_t reach, int64_t n) {
  return reach <= n - start ? start + reach : n;
}

}  // namespace ts
