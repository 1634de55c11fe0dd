// Batch normalization as one fused op (PyTorch's native_batch_norm): statistics per channel
// over (N, *spatial) in the accumulate type (float32 for 16-bit inputs, as autocast's
// float32 policy for batch norm asks), the running-statistic update in place, and a fused
// backward kernel. Under create_graph the formula takes differentiable ops instead
// (formulas.cpp), so double backward works.
#pragma once
#include <tuple>

#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// x (N, C, L) contiguous (on CUDA, or x, y, gy, gx all channels-last: (N, L, C) in memory);
// mean/var (C,) in the stats dtype (float32, float64 for float64 x).
using BatchNormStatsKernel = void (*)(const Tensor& x, const Tensor& mean, const Tensor& var);
// y = (x - mean) * rstd * w + b per channel; w/b (in the stats dtype) null for none.
using BatchNormApplyKernel = void (*)(const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                      const Tensor* w, const Tensor* b, const Tensor& y);
// gx (training: through the batch statistics; eval: gy * w * rstd), gw, gb (each may be null);
// w, gw and gb in the stats dtype, gx in x's.
using BatchNormBackwardKernel = void (*)(const Tensor& gy, const Tensor& x, const Tensor& mean,
                                         const Tensor& rstd, const Tensor* w, const Tensor* gx,
                                         const Tensor* gw, const Tensor* gb, bool training);
TS_DECLARE_STUB(BatchNormStatsKernel, batch_norm_stats_stub);
TS_DECLARE_STUB(BatchNormApplyKernel, batch_norm_apply_stub);
TS_DECLARE_STUB(BatchNormBackwardKernel, batch_norm_backward_stub);

// PyTorch's F.batch_norm: x (N, C, *) with N*prod(*) > 1 when training; running_mean/var (C,)
// or undefined (updated in place in training: r = (1 - momentum) r + momentum * batch, the
// variance unbiased); weight/bias (C,) or undefined. Eval mode uses the running statistics.
// The output keeps a channels-last input's memory format.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps);
// (gx, gw, gb) from the saved statistics (mean/rstd as the forward used them).
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& gy, const Tensor& x,
                                                       const Tensor& mean, const Tensor& rstd,
                                                       const Tensor& weight, bool training,
                                                       bool need_x, bool need_w, bool need_b);

}  // namespace ts
