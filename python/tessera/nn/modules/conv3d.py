"""Conv3d and ConvTranspose3d (PyTorch's arguments, weights, init and repr; the forward is
_ConvNd's, the math the C++ convolution ops')."""
from __future__ import annotations

from .conv import _ConvNd, _ConvTransposeNd


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W); weight (out, in/groups, kd, kh, kw)."""
    _nsp = 3


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W); weight (C_in, C_out/groups, kd,
    kh, kw)."""
    _nsp = 3
