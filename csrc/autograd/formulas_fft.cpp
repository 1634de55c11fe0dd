// Backward formulas of the fft ops (csrc/ops/fft.cpp).
//
// Note [FFT backward] (PyTorch's fft_c2c_backward / fft_r2c_backward / fft_c2r_backward):
// - The adjoint of a complex DFT with norm ν is the opposite-direction DFT with the swapped
//   norm ("backward" <-> "forward", "ortho" stays).
// - rfft keeps bins 0..n/2 of the full transform of a real signal: its adjoint zero-pads the
//   gradient back to n bins, applies the adjoint complex transform and keeps the real part.
// - irfft fills the missing bins by conjugate symmetry: its adjoint is the real transform of the
//   gradient with the bins that stand for two (1 .. n - (n/2 + 1)) doubled.
// - hfft and ihfft are irfft/rfft composed with conj, which records its own node.
// In every case the gradient is finally cropped or zero-padded to the input's own length (the
// adjoint of the forward's n=/s= crop or padding). The formulas call the public transforms, so
// under create_graph the backward is recorded too and gradients of every order work.
#include "autograd/function.h"
#include "autograd/record_fft.h"
#include "ops/arithmetic.h"
#include "ops/copy.h"
#include "ops/manipulation.h"
#include "ops/math.h"
#include "ops/views.h"

namespace ts::autograd {

namespace {

FftNorm swapped(FftNorm norm) {
  if (norm == FftNorm::Ortho) return norm;
  return norm == FftNorm::Backward ? FftNorm::Forward : FftNorm::Backward;
}

// t cropped (a recorded slice) or zero-padded (a recorded concat) to `len` along `ax`.
Tensor fit(const Tensor& t, int64_t ax, int64_t len) {
  const int64_t have = t.dim(ax);
  if (have == len) return t;
  if (have > len) return slice(t, ax, 0, len, 1);
  Shape s = t.shape();
  s[ax] = len - have;
  Tensor z = Tensor::empty(s, t.dtype(), t.device());
  fill_(z, Scalar::from_int(0));
  return concat({t, z}, ax);
}

// g (the rfft of a gradient, n/2 + 1 bins along ax) with bins 1 .. n - (n/2 + 1) doubled.
Tensor doubled(const Tensor& g, int64_t ax, int64_t n) {
  const int64_t bins = n / 2 + 1, d = n - bins;
  if (d <= 0) return g;
  Shape ws(static_cast<size_t>(g.ndim()), 1);
  ws[static_cast<size_t>(ax)] = bins;
  Tensor w = Tensor::empty(ws, to_real(g.dtype()), g.device());
  fill_(w, Scalar::from_double(1.0));
  fill_(slice(w, ax, 1, 1 + d, 1), Scalar::from_double(2.0));
  return multiply(g, w);
}

// attrs: (kind, forward, norm, k, axes[k], lens[k]).
variable_list fft_bw(const BackwardCtx& c, const variable_list& g) {
  const auto kind = static_cast<FftKindRec>(c.attr(0));
  const bool forward = c.attr(1) != 0;
  const FftNorm norm = static_cast<FftNorm>(c.attr(2));
  const size_t k = static_cast<size_t>(c.attr(3));
  const Shape& a = c.attrs();
  const Shape axes(a.begin() + 4, a.begin() + 4 + k);
  const Shape lens(a.begin() + 4 + k, a.end());
  const int64_t last = axes.back(), n_last = lens.back();
  Tensor gx;
  switch (kind) {
    case FftKindRec::C2C:
      gx = forward ? ifftn(g[0], std::nullopt, axes, swapped(norm))
                   : fftn(g[0], std::nullopt, axes, swapped(norm));
      break;
    case FftKindRec::R2C:
      gx = real(ifftn(fit(g[0], last, n_last), std::nullopt, axes, swapped(norm)));
      break;
    case FftKindRec::C2R:
      gx = doubled(rfftn(g[0], std::nullopt, axes, swapped(norm)), last, n_last);
      break;
  }
  const Shape& in = c.input(0).shape;
  for (int64_t ax : axes) gx = fit(gx, ax, in[static_cast<size_t>(ax)]);
  return {gx};
}

}  // namespace

void record_fft(FftKindRec kind, const Tensor& x, const Tensor& out, const Shape& axes,
                const Shape& lens, bool forward, FftNorm norm) {
  if (!needs_grad({&x}) || axes.empty()) return;
  static const Formula kC2C{"FftC2CBackward", fft_bw}, kR2C{"FftR2CBackward", fft_bw},
      kC2R{"FftC2RBackward", fft_bw};
  const Formula& f = kind == FftKindRec::C2C ? kC2C : kind == FftKindRec::R2C ? kR2C : kC2R;
  auto node = record(f, {x}, {out});
  Shape attrs{static_cast<int64_t>(kind), forward ? 1 : 0, static_cast<int64_t>(norm),
              static_cast<int64_t>(axes.size())};
  for (int64_t ax : axes) attrs.push_back(ax);
  for (int64_t len : lens) attrs.push_back(len);
  node->attrs = std::move(attrs);
}

}  // namespace ts::autograd
