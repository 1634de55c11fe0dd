// The array API fft extension (2024.12): 1-D and n-D complex, real and Hermitian transforms,
// sample frequencies and shifts. The CPU engine lives in csrc/cpu/fft_plan.h; CUDA tensors
// transform through cuFFT (csrc/cuda/fft_cufft.cpp).
#pragma once
#include <optional>
#include <string>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

enum class FftNorm { Backward, Ortho, Forward };
FftNorm parse_fft_norm(const std::string& norm, const char* op);

// One batch of 1-D transforms of length n over contiguous rows. c2c: rows of n complex in and
// out; r2c: n reals in, n/2+1 complex out; c2r: n/2+1 complex in, n reals out. `dtype` is the
// complex compute dtype (complex64 or complex128); the output is multiplied by `scale`.
// c2c also takes inner > 1: in and out are (batch, n, inner), transformed along the middle dim.
struct FftArgs {
  const void* in;
  void* out;
  int64_t batch, n, inner;
  bool forward;  // c2c only
  double scale;
  Device device{};  // where in/out live: device kernels run there, on its current stream
};
using FftKernel = void (*)(const FftArgs& args, DType dtype);
TS_DECLARE_STUB(FftKernel, fft_c2c_stub);
TS_DECLARE_STUB(FftKernel, fft_r2c_stub);
TS_DECLARE_STUB(FftKernel, fft_c2r_stub);

// n: transform length (input cropped or zero-padded along axis); nullopt keeps the input's
// length (for irfft/hfft: 2*(m-1)).
Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t axis, FftNorm norm);

// s[i] is the length along axes[i] (-1: the input's); axes default to the last len(s) axes,
// or all axes when s is also omitted. Axes are transformed last to first, as NumPy does.
Tensor fftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm);
Tensor ifftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm);
Tensor rfftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm);
Tensor irfftn(const Tensor& x, std::optional<Shape> s, std::optional<Shape> axes, FftNorm norm);

// Sample frequencies [0, 1, ..., -1] / (d n) and [0, ..., n/2] / (d n); dtype real floating.
Tensor fftfreq(int64_t n, double d, DType dtype, Device device = {});
Tensor rfftfreq(int64_t n, double d, DType dtype, Device device = {});

// Roll by n/2 (fftshift) or -(n/2) (ifftshift) along axes (all axes when nullopt).
Tensor fftshift(const Tensor& x, std::optional<Shape> axes);
Tensor ifftshift(const Tensor& x, std::optional<Shape> axes);

}  // namespace ts
