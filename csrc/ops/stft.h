// torch.stft / torch.istft composed of differentiable ops (index_select framing and padding, the
// FFTs, index_add overlap-add), so autograd flows through them (issue 17: one definition each).
#pragma once
#include <optional>
#include <string>

#include "core/tensor.h"

namespace ts {

struct StftArgs {
  int64_t n_fft = 0;
  std::optional<int64_t> hop_length, win_length;
  std::optional<Tensor> window;
  bool center = true;
  std::string pad_mode = "reflect";  // stft only: constant, reflect, replicate or circular
  bool normalized = false;
  std::optional<bool> onesided;
};

// The short-time Fourier transform of a 1-D (L,) or batched (B, L) signal: (..., n_fft / 2 + 1
// or n_fft, n_frames) complex, or with return_complex=false its (..., 2) real view stacked.
// return_complex must be given for a real input and window (torch's rule).
Tensor stft(const Tensor& x, const StftArgs& args, std::optional<bool> return_complex);

// The inverse: windowed overlap-add of the inverse FFTs of the frames, divided by the summed
// squared window (RuntimeError where it is 0: the NOLA condition), trimmed (center) to length.
Tensor istft(const Tensor& x, const StftArgs& args, std::optional<int64_t> length,
             bool return_complex);

}  // namespace ts
