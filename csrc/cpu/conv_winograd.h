// Winograd F(2x2, 3x3) convolutions on the CPU (Note [Winograd convolutions on the CPU] in
// conv_winograd.cpp): the 3x3 stride-1 undilated ungrouped 2-D convolutions, forward, input
// gradient and weight gradient, with 2.25x fewer multiplications than im2col + GEMM.
#pragma once
#include <cstdint>

namespace ts {
namespace winograd {

// The geometry every entry point takes: x (N, C, H, W) and y (N, O, Ho, Wo) with
// Ho = H + 2 ph - 2, Wo = W + 2 pw - 2 (both >= 1), a 3x3 kernel, padding (ph, pw) in [0, 2].
struct Geometry {
  int64_t N, C, O, H, W, ph, pw;
  int64_t Ho() const { return H + 2 * ph - 2; }
  int64_t Wo() const { return W + 2 * pw - 2; }
};

// Whether F(2x2, 3x3) is the faster path for this geometry on this machine (measured; see
// the Note): enough channels that the 16 GEMMs are efficient, and a large enough image.
bool pays(const Geometry& g);

// y = conv2d(x, w, padding (ph, pw)) with w (O, C, 3, 3); y is written, never read.
template <class T>
void forward(const T* x, const T* w, T* y, const Geometry& g);

// gx = conv_transpose(gy, w) of that convolution (its input gradient): gy (N, O, Ho, Wo),
// gx (N, C, H, W), written, never read.
template <class T>
void input_grad(const T* gy, const T* w, T* gx, const Geometry& g);

// gw = dconv/dw (gy, x): (O, C, 3, 3), written, never read.
template <class T>
void weight_grad(const T* gy, const T* x, T* gw, const Geometry& g);

}  // namespace winograd
}  // namespace ts
