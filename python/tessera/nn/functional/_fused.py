"""Autograd Functions over the fused C++ kernels not yet moved into C++ ops: the im2col/col2im
window kernels. (softmax, attention's softmax, layer norm, cross entropy, linear, GELU, ReLU,
embedding and dropout are C++ ops with C++ formulas: csrc/ops/nn/, autograd/formulas_nn.cpp.)

Note [Fused kernels and higher-order gradients]
The forward of each Function is one C++ kernel. Its backward calls the matching C++
backward kernel when no graph of the backward is being recorded (the common case); under
``create_graph=True`` (grad mode on inside backward) it computes the same gradient from
differentiable tessera ops instead, so gradients of gradients still work. im2col/col2im
are linear and each other's adjoints, so their backward is simply the other Function.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from ... import _C
from ..._C import Tensor
from ...autograd.function import Function, FunctionCtx

Pair = Tuple[int, int]

# The kernels cover these dtypes; others take the composite paths.
FUSED_DTYPES = ("float16", "bfloat16", "float32", "float64")


# Devices with kernels for softmax, attention softmax, layer norm, GELU/ReLU backward and
# cross entropy; the window kernels (im2col, conv2d, max pooling) are CPU-only.
FUSED_DEVICES = ("cpu", "cuda")


# fusable(*xs) -> bool: whether the row-wise/activation/loss kernels apply: floating tensors
# (FUSED_DTYPES) of one dtype on one device (every device type has the kernels: FUSED_DEVICES;
# None is ignored). Otherwise the composite ops (which every backend has) run instead. In C++:
# every fused op asks it on each call.
fusable = _C._fusable


def fusable_windows(*xs: Optional[Tensor]) -> bool:
    """fusable() for the sliding-window kernels (im2col/col2im, max pooling: CPU and CUDA).
    The one-GEMM conv2d kernel is the CPU's alone; conv.py checks the device for it."""
    return fusable(*xs)


# The dtypes of F.fold's one-kernel col2im path.
CONV_DTYPES = ("float32", "float64")


# ----------------------------------------------------------------- windows
class Im2col(Function):
    """(N, C, H, W) -> (N, C*kh*kw, Ho*Wo) with zero padding; backward is col2im."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, k: Pair, s: Pair, p: Pair,  # type: ignore[override]
                d: Pair) -> Tensor:
        ctx.geom = (x.shape[1], x.shape[2], x.shape[3], k, s, p, d)
        return _C._im2col(x, k, s, p, d)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        c, h, w, k, s, p, d = ctx.geom
        return Col2im.apply(g, c, h, w, k, s, p, d), None, None, None, None


class Col2im(Function):
    """Columns -> (N, C, H, W), summing overlaps (im2col's adjoint); backward is im2col."""

    @staticmethod
    def forward(ctx: FunctionCtx, cols: Tensor, c: int, h: int, w: int, k: Pair,  # type: ignore[override]
                s: Pair, p: Pair, d: Pair) -> Tensor:
        ctx.geom = (k, s, p, d)
        return _C._col2im(cols, c, h, w, k, s, p, d)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        k, s, p, d = ctx.geom
        return (Im2col.apply(g, k, s, p, d),) + (None,) * 7


def pairs(values: Sequence[int], nsp: int, fill: int) -> Pair:
    """A 1-D window's (k,) as the 2-D (fill, k); 2-D values unchanged."""
    return (fill, int(values[0])) if nsp == 1 else (int(values[0]), int(values[1]))
