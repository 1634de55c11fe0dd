"""Autograd Functions over the fused C++ nn kernels (csrc/ops/nn_fused.h).

Note [Fused kernels and higher-order gradients]
The forward of each Function is one C++ kernel. Its backward calls the matching C++
backward kernel when no graph of the backward is being recorded (the common case); under
``create_graph=True`` (grad mode on inside backward) it computes the same gradient from
differentiable tessera ops instead, so gradients of gradients still work. im2col/col2im
and max pooling's scatter/gather are linear and each other's adjoints, so their backward
is simply the other Function.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

from ... import _C
from ..._C import Tensor
from ...autograd.function import Function, FunctionCtx

Pair = Tuple[int, int]

# The kernels cover these dtypes; others take the composite paths.
FUSED_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _ts() -> Any:
    import tessera
    return tessera


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


# ----------------------------------------------------------------- linear
class Linear(Function):
    """y = x W^T + b. The backward forms dW = g^T x directly in W's (out, in) layout; the
    generic matmul rule would produce it transposed, and accumulating a transposed gradient
    costs a strided copy of the whole weight every step."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, w: Tensor,  # type: ignore[override]
                b: Optional[Tensor]) -> Tensor:
        y = _ts().matmul(x, w.mT) if b is None else _C._linear_bias(x, w, b)
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        x, w = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        gx = t.matmul(g, w) if need_x else None
        g2 = t.reshape(g, (-1, g.shape[-1])) if g.ndim != 2 else g
        gw = None
        if need_w:
            x2 = t.reshape(x, (-1, x.shape[-1])) if x.ndim != 2 else x
            gw = t.matmul(g2.mT, x2)
        gb = t.sum(g2, axis=0) if ctx.has_bias and need_b else None
        return gx, gw, gb


# The dtypes of F.fold's one-kernel col2im path.
CONV_DTYPES = ("float32", "float64")


class Softmax(Function):
    """softmax / log_softmax over the last axis."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, log: bool) -> Tensor:  # type: ignore[override]
        y = _C._softmax_last(x, log)
        ctx.save_for_backward(y)
        ctx.log = log
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        if not _C.is_grad_enabled():
            return _C._softmax_last_backward(y, g, ctx.log), None
        if ctx.log:
            t = _ts()
            return g - t.exp(y) * t.sum(g, axis=-1, keepdims=True), None
        return _softmax_grad(y, g), None


def _softmax_grad(y: Tensor, g: Tensor) -> Tensor:
    """softmax's input gradient from differentiable ops (for create_graph=True)."""
    return y * (g - _ts().sum(g * y, axis=-1, keepdims=True))


def softmax_axis(x: Tensor, axis: int, log: bool) -> Tensor:
    """softmax over any axis through the last-axis kernel (moving the axis there and back)."""
    t = _ts()
    axis = axis % x.ndim
    if axis == x.ndim - 1:
        return Softmax.apply(x, log)
    return t.moveaxis(Softmax.apply(t.moveaxis(x, axis, -1), log), -1, axis)


# ----------------------------------------------------------------- attention softmax
class AttentionSoftmax(Function):
    """softmax(scale * scores) over the last axis of (..., L, S) scores, optionally causal
    (query i sees keys j <= i), in one kernel without a mask tensor."""

    @staticmethod
    def forward(ctx: FunctionCtx, scores: Tensor, scale: float,  # type: ignore[override]
                causal: bool) -> Tensor:
        y = _C._attention_softmax(scores, scale, causal)
        ctx.save_for_backward(y)
        ctx.scale, ctx.causal = scale, causal
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        if not _C.is_grad_enabled():
            return _C._attention_softmax_backward(y, g, ctx.scale, ctx.causal), None, None
        # Masked entries have y == 0, so they get no gradient here either.
        return ctx.scale * _softmax_grad(y, g), None, None


# ----------------------------------------------------------------- cross entropy
class CrossEntropy(Function):
    """Per-row cross entropy of logits (rows, C) and int64 targets (rows,) with PyTorch's
    weight / ignore_index / label_smoothing formula. Returns (loss, row_weight): row_weight
    is the weight of each row's target (0 where ignored), the 'mean' reduction's
    denominator; it is not differentiable (neither is the class weight: PyTorch refuses
    a weight that requires grad, the weight gets no gradient here)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, target: Tensor,  # type: ignore[override]
                weight: Optional[Tensor], ignore_index: int, smoothing: float) -> Any:
        loss, lse, row_weight = _C._cross_entropy(x, target, weight, ignore_index, smoothing)
        ctx.save_for_backward(x, target, weight, lse)
        ctx.opts = (ignore_index, smoothing)
        ctx.mark_non_differentiable(row_weight)
        return loss, row_weight

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor, _grw: Any = None) -> Any:  # type: ignore[override]
        x, target, weight, lse = ctx.saved_tensors
        ignore_index, smoothing = ctx.opts
        if not _C.is_grad_enabled():
            gx = _C._cross_entropy_backward(g, x, target, weight, lse, ignore_index, smoothing)
        else:
            gx = _cross_entropy_backward_composite(g, x, target, weight, ignore_index, smoothing)
        return gx, None, None, None, None


def _cross_entropy_backward_composite(g: Tensor, x: Tensor, target: Tensor,
                                      weight: Optional[Tensor], ignore_index: int,
                                      smoothing: float) -> Tensor:
    """d loss_n / d x_nc = (1 - eps) w_t (p_c - [c == t]) + eps / C (sum(w) p_c - w_c), times
    g_n and 0 for ignored rows, from differentiable ops (for create_graph=True)."""
    t = _ts()
    c = x.shape[1]
    p = Softmax.apply(x, False)
    keep = target != ignore_index
    safe = t.where(keep, target, 0)
    onehot = (t.expand_dims(safe, axis=-1) == t.arange(c, device=x.device)).astype(x.dtype)
    if weight is None:
        wt, wsum, w = keep.astype(x.dtype), float(c), None
    else:
        w = weight.detach()
        wt = t.sum(onehot * w, axis=-1) * keep.astype(x.dtype)
        wsum = t.sum(w)
    gk = t.expand_dims(g * keep.astype(x.dtype), axis=-1)
    grad = t.expand_dims((1 - smoothing) * wt, axis=-1) * (p - onehot)
    if smoothing > 0:
        grad = grad + (smoothing / c) * (wsum * p - (w if w is not None else 1.0))
    return gk * grad


# ----------------------------------------------------------------- layer norm
class LayerNorm(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, w: Optional[Tensor], b: Optional[Tensor],
                n: int, eps: float) -> Tensor:  # type: ignore[override]
        y, mean, rstd = _C._layer_norm(x, n, w, b, eps)
        ctx.save_for_backward(x, w, mean, rstd)
        ctx.has_bias, ctx.n, ctx.eps = b is not None, n, eps
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        x, w, mean, rstd = ctx.saved_tensors
        if not _C.is_grad_enabled():
            gx, gw, gb = _C._layer_norm_backward(g, x, mean, rstd, w, ctx.has_bias)
            return gx, gw, gb, None, None
        return _layer_norm_backward_composite(g, x, w, ctx.has_bias, ctx.n, ctx.eps)


def _layer_norm_backward_composite(g: Tensor, x: Tensor, w: Optional[Tensor], has_bias: bool,
                                   n: int, eps: float) -> Any:
    t = _ts()
    rows = x.size // n if n else 0
    shape = tuple(x.shape)
    xr, gr = t.reshape(x, (rows, n)), t.reshape(g, (rows, n))
    mean = t.mean(xr, axis=1, keepdims=True)
    xc = xr - mean
    rstd = 1 / t.sqrt(t.mean(xc * xc, axis=1, keepdims=True) + eps)
    xhat = xc * rstd
    gg = gr * t.reshape(w, (n,)) if w is not None else gr
    gx = rstd * (gg - t.mean(gg, axis=1, keepdims=True)
                 - xhat * t.mean(gg * xhat, axis=1, keepdims=True))
    gw = t.reshape(t.sum(gr * xhat, axis=0), tuple(w.shape)) if w is not None else None
    gb = t.sum(gr, axis=0) if has_bias else None
    if gb is not None and w is not None:
        gb = t.reshape(gb, tuple(w.shape))
    return t.reshape(gx, shape), gw, gb, None, None


# ----------------------------------------------------------------- ReLU
class Relu(Function):
    """max(x, 0) whose backward masks by the saved output in one pass."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:  # type: ignore[override]
        y = _ts().maximum(x, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        (y,) = ctx.saved_tensors
        if not _C.is_grad_enabled():
            return _C._relu_backward(y, g)
        return _ts().where(y <= 0, 0.0, g)


# ----------------------------------------------------------------- GELU
class Gelu(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, tanh_approx: bool) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(x)
        ctx.tanh_approx = tanh_approx
        return _C._gelu(x, tanh_approx)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        (x,) = ctx.saved_tensors
        if not _C.is_grad_enabled():
            return _C._gelu_backward(x, g, ctx.tanh_approx), None
        t = _ts()
        if ctx.tanh_approx:
            k = math.sqrt(2 / math.pi)
            th = t.tanh(k * (x + 0.044715 * x * x * x))
            d = 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * k * (1 + 3 * 0.044715 * x * x)
            return g * d, None
        from .activation import erfc
        cdf = 0.5 * erfc(x * (-1 / math.sqrt(2.0)))
        pdf = t.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return g * (cdf + x * pdf), None


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
