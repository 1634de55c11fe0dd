// What the fft ops (csrc/ops/fft.cpp) call to record themselves; the formulas are in
// formulas_fft.cpp (Note [FFT backward] there). A no-op unless grad mode is on and x requires
// grad.
#pragma once
#include "core/tensor.h"
#include "ops/fft.h"

namespace ts::autograd {

// The three transform kinds, named as PyTorch's nodes: FftC2CBackward0 (fft/ifft/fftn/ifftn),
// FftR2CBackward0 (rfft/rfftn, and ihfft before its conj), FftC2RBackward0 (irfft/irfftn, and
// hfft after its conj).
enum class FftKindRec { C2C, R2C, C2R };

// out = the transform of x over `axes` with lengths `lens` (lens[i] along axes[i]; for R2C the
// last axis has lens.back()/2 + 1 output bins, for C2R lens.back()/2 + 1 input bins);
// `forward`: the direction of a C2C transform.
void record_fft(FftKindRec kind, const Tensor& x, const Tensor& out, const Shape& axes,
                const Shape& lens, bool forward, FftNorm norm);

}  // namespace ts::autograd
