"""Pooling (torch.nn.functional's): max/avg pooling of any rank with indices, ceil_mode and
dilation, adaptive average/max pooling, max_unpool, LP pooling and fold/unfold, all the C++
bindings themselves (gradients in C++)."""
from __future__ import annotations

# The C++ ops themselves (csrc/python/bind_conv.cpp, bind_pool.cpp: PyTorch's signatures,
# argument forms, checks and gradients in csrc/ops/pool.cpp and csrc/ops/nn/fold.cpp).
from ..._C import (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,  # noqa: F401
                  max_pool2d_with_indices, max_pool3d_with_indices, avg_pool1d, avg_pool2d,
                  avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                  adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
                  adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
                  adaptive_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
                  lp_pool1d, lp_pool2d, lp_pool3d, unfold, fold)
