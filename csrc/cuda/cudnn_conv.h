// The three convolution ops through cuDNN 9 (Note [cuDNN at run time] in cudnn_conv.cpp):
// tensors are contiguous or channels-last contiguous; each returns false, having done nothing, when
// cuDNN is disabled (ts.backends.cudnn.enabled), cannot be loaded, or has no engine for the
// problem; the caller then runs its own kernels.
#pragma once
#include "core/tensor.h"
#include "ops/conv.h"

namespace ts::cuda {

// y = conv(x, w) (no bias: the caller adds it).
bool cudnn_conv_forward(const Tensor& x, const Tensor& w, const Tensor& y, const ConvSpec& s);
bool cudnn_conv_transpose(const Tensor& gy, const Tensor& w, const Tensor& gx, const ConvSpec& s);
bool cudnn_conv_weight(const Tensor& gy, const Tensor& x, const Tensor& gw, const ConvSpec& s);

// For the other cuDNN users (cuda/cudnn_attention.cpp), as opaque pointers: the dlopen handle of
// the loaded libcudnn_graph.so.9, and the calling thread's cuDNN handle (cudnnHandle_t) for
// device `dev` bound to that device's current stream; nullptr where cuDNN does not load.
void* cudnn_library();
void* cudnn_handle(int dev);

}  // namespace ts::cuda
