// Vectorized float32 exp and tanh over contiguous arrays (libm's expf/tanhf are opaque calls
// that do not vectorize).
// Note [fast float32 math]: exp uses Cephes' reduction x = n ln2 + r, |r| <= ln2/2, a degree-7
// polynomial and a two-step 2^n scale so subnormal results round once. tanh is
// sign(x) e / (e + 2) with e = expm1(2|x|) = 2^n expm1(r) + (2^n - 1) (a degree-6 minimax
// expm1 on |r| <= ln2/2, fitted for relative error), which stays accurate down to the
// smallest x with one division and no second branch to evaluate. Checked on all 2^32 inputs
// against float64: exp is within 1.01 ulp of the exact value and tanh within 2.57 ulp (the
// rounding of e + 2 dominates); tests/test_fast_paths.py samples the whole range with bounds
// of 2 and 3 ulp. Both follow the standard's special cases (NaN, +-inf, signed zeros).
//
// The loops are compiled for AVX-512F, AVX2 (both with FMA contraction) and baseline x86-64
// and picked at load time (target_clones). A strided operand is gathered into a buffer and
// goes through the same loop, so results never depend on the layout or the thread count; on
// a CPU without AVX2 (no FMA) they may differ from an AVX2 machine's in the last bit.
#pragma once
#include <cstdint>

namespace ts::fast {

// out[i] = f(in[i]) for i < n; out may equal in.
void exp_f32_array(float* out, const float* in, int64_t n);
void tanh_f32_array(float* out, const float* in, int64_t n);

}  // namespace ts::fast
