// Max and average pooling over 1-3 spatial dims as ops with C++ gradients. Windows follow
// PyTorch: padding is -inf (max) or zeros (average), ceil_mode adds a last window that starts
// inside the input or its left padding, max pooling's indices are flat positions in each
// (unpadded) input plane and the first maximum wins (NaN wins over numbers), the average's
// divisor is divisor_override, else the window's size clipped to the padded input
// (count_include_pad) or to the input.
#pragma once
#include <array>
#include <tuple>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

struct PoolSpec {
  int nsp = 2;
  // Right-aligned in 3 slots (leading slots 1 / 0), like ConvSpec.
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0},
      d{1, 1, 1};
  bool count_include_pad = true;
  int64_t divisor = 0;    // divisor_override, 0 for none
  bool adaptive = false;  // PyTorch's adaptive windows [floor(o*n/m), ceil((o+1)*n/m))
  // Every tensor the kernels see is channels-last ((N, *spatial, C) in memory) rather than
  // contiguous. Set on CUDA for channels-last inputs only: the CPU kernels take contiguous
  // planes, the op copies around them (Note [CUDA channels-last pools]).
  bool channels_last = false;
  int64_t in_numel() const { return in[0] * in[1] * in[2]; }
  int64_t out_numel() const { return out[0] * out[1] * out[2]; }
  Shape encode() const;
  static PoolSpec decode(const Shape& a);
};

// x (N, C, *in) contiguous -> y (N, C, *out); idx int64 (N, C, *out); all three channels-last
// instead where s.channels_last (which only devices whose kernels take it see).
using MaxPoolNdKernel = void (*)(const Tensor& x, const Tensor& y, const Tensor& idx,
                                 const PoolSpec& s);
// gx (P, *in) = 0, then gy scattered (summed) to idx.
using MaxPoolNdBackwardKernel = void (*)(const Tensor& gy, const Tensor& idx, const Tensor& gx,
                                         const PoolSpec& s);
using AvgPoolNdKernel = void (*)(const Tensor& x, const Tensor& y, const PoolSpec& s);
using AvgPoolNdBackwardKernel = void (*)(const Tensor& gy, const Tensor& gx, const PoolSpec& s);
TS_DECLARE_STUB(MaxPoolNdKernel, max_pool_nd_stub);
TS_DECLARE_STUB(MaxPoolNdBackwardKernel, max_pool_nd_backward_stub);
TS_DECLARE_STUB(AvgPoolNdKernel, avg_pool_nd_stub);
TS_DECLARE_STUB(AvgPoolNdBackwardKernel, avg_pool_nd_backward_stub);
// max_unpool: planes x (P, L) and int64 idx (P, L) contiguous -> y (P, M): zeros, then
// y[p, idx[p, l]] = x[p, l] in order (the last of repeated indices wins). Any dtype (the
// values are copied). Returns false, with an index outside [0, M) in *first_bad, when there is
// one; such an index is never written through.
using MaxUnpoolKernel = bool (*)(const Tensor& x, const Tensor& idx, const Tensor& y,
                                 int64_t* first_bad);
// Its adjoint: gx (P, L) = gy (P, M) gathered at idx (P, L), the indices already checked.
using MaxUnpoolGatherKernel = void (*)(const Tensor& gy, const Tensor& idx, const Tensor& gx);
// LP pooling (PyTorch's formula, no padding, no dilation): y = (K / n_w * sum_w x^p)^(1/p)
// per window w of n_w in-input taps (K the kernel's size); its gradient (the coefficient
// masked to 0 where the window's value is 0, as PyTorch's relu there).
using LpPoolKernel = void (*)(const Tensor& x, const Tensor& y, const PoolSpec& s, double p);
using LpPoolBackwardKernel = void (*)(const Tensor& gy, const Tensor& x, const Tensor& gx,
                                      const PoolSpec& s, double p);
TS_DECLARE_STUB(MaxUnpoolKernel, max_unpool_stub);
TS_DECLARE_STUB(MaxUnpoolGatherKernel, max_unpool_gather_stub);
TS_DECLARE_STUB(LpPoolKernel, lp_pool_stub);
TS_DECLARE_STUB(LpPoolBackwardKernel, lp_pool_backward_stub);

// PyTorch's max_pool{1,2,3}d / avg_pool{1,2,3}d on (N, C, *in) or (C, *in) floating input
// (max pooling: integer input too on the CPU, as PyTorch's): kernel/stride/padding/dilation
// one value or nsp values (stride empty: the kernel). Returns (y, indices) for max pooling.
std::tuple<Tensor, Tensor> max_pool(const Tensor& x, int nsp, const Shape& kernel,
                                    const Shape& stride, const Shape& padding,
                                    const Shape& dilation, bool ceil_mode, const char* op);
Tensor avg_pool(const Tensor& x, int nsp, const Shape& kernel, const Shape& stride,
                const Shape& padding, bool ceil_mode, bool count_include_pad,
                int64_t divisor_override, const char* op);

// PyTorch's adaptive_{avg,max}_pool{1,2,3}d to output sizes `out` (nsp values, each >= 0;
// for max, the values and flat per-plane indices; for avg, indices undefined).
std::tuple<Tensor, Tensor> adaptive_pool(const Tensor& x, int nsp, const Shape& out, bool max,
                                         const char* op);

// PyTorch's max_unpool{1,2,3}d: x (N, C, *in) or (C, *in), indices of the same shape (any
// integer dtype; flat positions in each output plane), output_size nsp values (or nsp + 1 /
// nsp + 2 with the leading ones ignored; empty: the default (in - 1) s - 2 p + k).
// IndexError for an index outside the output plane.
Tensor max_unpool(const Tensor& x, const Tensor& indices, int nsp, const Shape& kernel,
                  const Shape& stride, const Shape& padding, const Shape& output_size,
                  const char* op);
// PyTorch's lp_pool{1,2,3}d: norm_type +inf is max_pool of |x|, -inf minus max_pool of -|x|.
Tensor lp_pool(const Tensor& x, int nsp, double norm_type, const Shape& kernel,
               const Shape& stride, bool ceil_mode, const char* op);

// The recorded pieces the gradient formulas use (x batched: (N, C, *in)).
Tensor max_pool_backward_op(const Tensor& gy, const Tensor& idx, const Shape& in_shape,
                            const PoolSpec& s);
Tensor avg_pool_forward_op(const Tensor& x, const PoolSpec& s);
Tensor avg_pool_backward_op(const Tensor& gy, const Shape& in_shape, const PoolSpec& s);
// x, idx (N, C, *in) -> (N, C, *out_sp) and back (the indices checked by max_unpool).
Tensor max_unpool_op(const Tensor& x, const Tensor& idx, const Shape& out_sp,
                     const char* op = "max_unpool");
Tensor max_unpool_gather_op(const Tensor& gy, const Tensor& idx);
Tensor lp_pool_forward_op(const Tensor& x, const PoolSpec& s, double p);
// The fused gradient (no graph; the formula composes differentiable ops under create_graph).
Tensor lp_pool_backward_op(const Tensor& gy, const Tensor& x, const PoolSpec& s, double p);

}  // namespace ts
