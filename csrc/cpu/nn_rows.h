// Row helpers shared by the CPU row-wise nn kernels (cpu/nn_norm_kernels.cpp,
// cpu/nn_loss_kernels.cpp): grain size, lane-split reductions, row exponentials.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cpu/fast_math.h"
#include "core/parallel.h"

namespace ts::nn_rows {

inline int64_t row_grain(int64_t n) {
  return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
}

// Row reductions in kLanes independent partial results (combined in a fixed order), so the
// loop vectorizes without reassociating a single serial chain; results do not depend on
// threads.
constexpr int kLanes = 16;

template <class A, class F>
A lane_reduce(int64_t n, A init, const F& load, A (*combine)(A, A)) {
  A acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] = combine(acc[j], load(i + j));
  for (; i < n; ++i) acc[0] = combine(acc[0], load(i));
  A r = acc[0];
  for (int j = 1; j < kLanes; ++j) r = combine(r, acc[j]);
  return r;
}

template <class A>
inline A add2(A a, A b) {
  return a + b;
}
// NaN-propagating max (a NaN input makes the row NaN downstream either way).
template <class A>
inline A max2(A a, A b) {
  return b > a || b != b ? b : a;
}

// out[i] = exp(in[i]) for a row in the compute type.
template <class A>
void exp_row(A* out, const A* in, int64_t n) {
  if constexpr (std::is_same_v<A, float>) {
    fast::exp_f32_array(out, in, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
  }
}

}  // namespace ts::nn_rows
