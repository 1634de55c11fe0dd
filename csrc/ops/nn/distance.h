// pdist (PyTorch's F.pdist / torch.pdist) and one_hot (F.one_hot), written with recorded ops,
// so they run on every device and their gradients are those ops'.
#pragma once
#include "core/tensor.h"

namespace ts::nn {

// The p-norm distances between the rows of a floating (N, M) input for all pairs i < j in
// row-major order: shape (N (N - 1) / 2,). Zero distances get a zero gradient (PyTorch's), for
// every p; p = 0 counts the differing coordinates (zero gradient), p = inf takes the largest.
Tensor pdist(const Tensor& x, double p);

// int64 one-hot encoding of integer class indices along a new last axis; num_classes < 0
// infers max + 1 (a host read). tessera ValueError (a RuntimeError, PyTorch's class) for values
// outside [0, num_classes) or nothing to infer from.
Tensor one_hot(const Tensor& x, int64_t num_classes);

}  // namespace ts::nn
