// Note [fast float32 math] (fast_math.h). GCC if-converts the float selects only when
// comparisons may not trap; we never read the floating-point exception flags, so this changes
// no result. FMA contraction is on: the AVX2/AVX-512 clones use it (a third fewer
// instructions in the polynomials).
#pragma GCC optimize("no-trapping-math", "fp-contract=fast")
#include "cpu/fast_math.h"

#include "cpu/fast_math_scalar.h"

namespace ts::fast {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(TESSERA_NO_SIMD_CLONES)
// x86-64-v4: AVX-512F/BW/DQ/VL + FMA; v3: AVX2 + FMA (a bare "avx2" clone gets no FMA).
#define TS_TARGET_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
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
