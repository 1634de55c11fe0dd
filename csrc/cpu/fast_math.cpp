// GCC if-converts the float selects only when comparisons may not trap; we never read the
// floating-point exception flags, so this changes no result. No FMA contraction: the AVX-512
// clone (where FMA is on) then rounds exactly like the baseline and the strided scalar path,
// so results don't depend on the CPU or the layout.
#pragma GCC optimize("no-trapping-math", "fp-contract=off")
#include "cpu/fast_math.h"

namespace ts::fast {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_TARGET_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_TARGET_CLONES
#endif

TS_TARGET_CLONES void exp_f32_array(float* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_f32(in[i]);
}

TS_TARGET_CLONES void tanh_f32_array(float* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = tanh_f32(in[i]);
}

}  // namespace ts::fast
