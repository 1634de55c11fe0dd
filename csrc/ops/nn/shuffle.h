// pixel_shuffle, pixel_unshuffle and channel_shuffle (PyTorch's F.pixel_shuffle,
// F.pixel_unshuffle, F.channel_shuffle / F.native_channel_shuffle): a reshape, one permutation
// and a reshape each, written with recorded view ops, so they run on every device and their
// gradients are the views' (the inverse rearrangement).
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// (*, C r^2, H, W) -> (*, C, H r, W r). tessera ValueError (a RuntimeError as PyTorch's) for r <=
// 0, fewer than 3 dims or C not divisible by r^2.
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor);

// (*, C, H r, W r) -> (*, C r^2, H, W), pixel_shuffle's inverse; an empty input comes back as
// a copy of itself, its shape unchanged (PyTorch's).
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor);

// (N, C, *) with C = g k: the channel order (g, k) becomes (k, g) (ShuffleNet). `op` names the
// entry point in errors (channel_shuffle or native_channel_shuffle).
Tensor channel_shuffle(const Tensor& x, int64_t groups, const char* op = "channel_shuffle");

}  // namespace ts::nn
