"""interpolate / upsample (PyTorch's F.interpolate): nearest, nearest-exact, (bi/tri)linear,
bicubic and area resampling of (N, C, *spatial) inputs.

Note [Separable resampling by gathered taps]
Every mode but area is separable: along one spatial axis, output position i reads a few
input positions (taps) idx_k[i] with weights w_k[i] (1 tap for nearest, 2 for linear, 4 for
bicubic). The taps and weights are computed on the host with PyTorch's index arithmetic
(float32 for float32/half inputs, float64 for float64, as PyTorch's opmath), then the axis
is resampled as sum_k take(x, idx_k, axis) * w_k. take's backward scatter-adds, so the
gradient is PyTorch's (overlapping taps accumulate). Axes are resampled one after another;
the result differs from PyTorch's fused kernels only by rounding order.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from ... import _C
from ..._C import Tensor
from ...autograd.function import Function, FunctionCtx

SizeArg = Optional[Union[int, Sequence[int]]]
ScaleArg = Optional[Union[float, Sequence[float]]]

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_CUBIC_A = -0.75


def _ts() -> Any:
    import tessera
    return tessera


def _seq(v: Any, n: int, name: str, conv: Any) -> Tuple[Any, ...]:
    if isinstance(v, (list, tuple)):
        if len(v) != n:
            raise ValueError(f"interpolate: {name} of length {len(v)} does not match the {n} "
                             f"spatial dimensions of the input")
        return tuple(conv(a) for a in v)
    return (conv(v),) * n


class InterpolateSizeError(ValueError, RuntimeError):
    """Empty input or output sizes: ValueError for the bad argument, RuntimeError as PyTorch
    raises."""


def _output_size(x: Tensor, nsp: int, size: SizeArg, scale_factor: ScaleArg,
                 recompute: Optional[bool], empty_ok: bool = False
                 ) -> Tuple[Tuple[int, ...], Tuple[Optional[float], ...]]:
    """Output sizes and the scales the kernels use (None: recompute in/out) — PyTorch's
    _interp_output_size and recompute_scale_factor rules. `empty_ok`: output sizes of 0 are
    allowed (area mode is adaptive average pooling, which PyTorch lets produce them)."""
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size or scale_factor must be defined")
    in_sp = tuple(x.shape[2:])
    if size is not None:
        if recompute:
            raise ValueError("interpolate: recompute_scale_factor is not meaningful with an "
                             "explicit size")
        out = _seq(size, nsp, "size", int)
        scales: Tuple[Optional[float], ...] = (None,) * nsp
    else:
        sf = _seq(scale_factor, nsp, "scale_factor", float)
        if any(not math.isfinite(s) or s <= 0 for s in sf):
            raise ValueError(f"interpolate: scale_factor must be positive and finite, got {sf}")
        out = tuple(int(math.floor(float(n) * s)) for n, s in zip(in_sp, sf))
        scales = (None,) * nsp if recompute else sf
    if any(o < 0 or (o == 0 and not empty_ok) for o in out) or any(n <= 0 for n in in_sp):
        raise InterpolateSizeError(f"interpolate: input spatial size {in_sp} and output size "
                                   f"{out} must be greater than 0")
    # before any per-position table is built: overflow is a RuntimeError, an output that
    # cannot be allocated a MemoryError
    from ..._arg_checks import check_output_size
    check_output_size("interpolate", tuple(x.shape[:2]) + out, x.dtype, x.device)
    return out, scales


def _ftype(x: Tensor) -> Any:
    return np.float64 if str(x.dtype).endswith("float64") else np.float32


def _scale(n: int, m: int, align_corners: bool, scale: Optional[float], ft: Any) -> Any:
    """PyTorch's area_pixel_compute_scale."""
    if align_corners:
        return ft(n - 1) / ft(m - 1) if m > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n) / ft(m)


def _half_pixel_source(s: Any, m: int, ft: Any) -> Any:
    """s * (i + 0.5) - 0.5 rounded once to ft, as PyTorch's compiled kernel computes it (one
    fused multiply-add): the product is exact in the next wider type."""
    wide = np.float64 if ft == np.float32 else np.longdouble
    return (wide(s) * (np.arange(m, dtype=wide) + wide(0.5)) - wide(0.5)).astype(ft)


def _nearest_taps(n: int, m: int, scale: Optional[float], exact: bool) -> List[Tuple[Any, Any]]:
    """PyTorch's nearest_idx / nearest_neighbor_exact_compute_source_index (float32 math)."""
    i = np.arange(m, dtype=np.int64)
    if not exact and m == n:
        idx = i
    elif not exact and m == 2 * n:
        idx = i >> 1
    else:
        s = (np.float32(1.0 / scale) if scale is not None and scale > 0
             else np.float32(n) / np.float32(m))
        pos = (i.astype(np.float32) + np.float32(0.5)) * s if exact else i.astype(np.float32) * s
        idx = np.minimum(np.floor(pos).astype(np.int64), n - 1)
    return [(idx, None)]


def _linear_taps(n: int, m: int, align_corners: bool, scale: Optional[float],
                 ft: Any) -> List[Tuple[Any, Any]]:
    s = _scale(n, m, align_corners, scale, ft)
    i = np.arange(m).astype(ft)
    src = s * i if align_corners else np.maximum(_half_pixel_source(s, m, ft), ft(0))
    i0 = np.minimum(src.astype(np.int64), n - 1)
    lam = np.clip(src - i0.astype(ft), ft(0), ft(1)).astype(ft)
    i1 = np.minimum(i0 + 1, n - 1)
    return [(i0, ft(1) - lam), (i1, lam)]


def _cubic_taps(n: int, m: int, align_corners: bool, scale: Optional[float],
                ft: Any) -> List[Tuple[Any, Any]]:
    s = _scale(n, m, align_corners, scale, ft)
    i = np.arange(m).astype(ft)
    src = s * i if align_corners else _half_pixel_source(s, m, ft)
    base = np.floor(src)
    t = (src - base).astype(ft)
    a = ft(_CUBIC_A)

    def conv1(v: Any) -> Any:  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def conv2(v: Any) -> Any:  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    weights = [conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)]
    b = base.astype(np.int64)
    return [(np.clip(b + k - 1, 0, n - 1), w.astype(ft)) for k, w in enumerate(weights)]


# Up to this many input positions per axis the weighted modes resample by a dense (m, n)
# matmul (k nonzeros per row, the rest exact zeros, so the same sums): BLAS throughput beats
# the gather/index_add pair by several times there. Longer axes, nearest modes (pure copies)
# and inputs with infinities or NaNs (0 * inf would spread NaN along the row) gather.
_DENSE_MAX = 256


def _apply_matrix(x: Tensor, mat: Tensor, axis: int) -> Tensor:
    """Contracts x's `axis` (length n) with mat (m, n): the result has length m there."""
    t = _ts()
    if axis == x.ndim - 1:
        return t.matmul(x, mat.mT)
    if axis == x.ndim - 2:
        return t.matmul(mat, x)
    return t.moveaxis(t.matmul(t.moveaxis(x, axis, -1), mat.mT), -1, axis)


class _GatherAxis(Function):
    """x[..., idx, ...] along `axis` for the nearest modes: a broadcast for integer
    upscaling, else take. The backward sums the gradient back as a one-hot (n, m) matmul for
    short axes with finite gradients, else by index_add (both several times faster here than
    the generic indexing backward)."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor, idx: Any,  # type: ignore[override]
                axis: int) -> Tensor:
        t = _ts()
        n, m = x.shape[axis], idx.size
        ctx.meta = (tuple(x.shape), idx, axis)
        shape = tuple(x.shape)
        if m % n == 0 and np.array_equal(idx, np.arange(m) // (m // n)):
            y = t.broadcast_to(t.expand_dims(x, axis=axis + 1),
                               shape[:axis + 1] + (m // n,) + shape[axis + 1:])
            return t.reshape(y, shape[:axis] + (m,) + shape[axis + 1:])
        return t.take(x, t.asarray(idx, device=x.device), axis=axis)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Any:  # type: ignore[override]
        t = _ts()
        shape, idx, axis = ctx.meta
        n = shape[axis]
        if (n <= _DENSE_MAX and t.isdtype(g.dtype, "real floating")
                and bool(t.all(t.isfinite(g)).item())):
            onehot = np.zeros((n, idx.size))
            onehot[idx, np.arange(idx.size)] = 1.0
            mat = t.asarray(onehot, device=g.device).astype(g.dtype)
            return _apply_matrix(g, mat, axis), None, None
        zero = t.zeros(shape, dtype=g.dtype, device=g.device)
        return t.index_add(zero, axis, t.asarray(idx, device=g.device), g), None, None


def _aa_filter(x: Any, cubic: bool) -> Any:
    """PyTorch's antialiasing filters: triangle for bilinear, Keys cubic (a = -0.5)."""
    x = np.abs(x)
    if not cubic:
        return np.maximum(1 - x, 0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def _aa_taps(n: int, m: int, align_corners: bool, scale: Optional[float], ft: Any,
             cubic: bool) -> List[Tuple[Any, Any]]:
    """PyTorch's antialiased (PIL-style) weights: the filter widened by the downscaling
    factor, evaluated at the input pixel centres of a window around each output centre and
    normalized to sum 1."""
    s = _scale(n, m, align_corners, scale, ft)
    interp = 4 if cubic else 2
    support = ft(interp * 0.5) * s if s >= 1 else ft(interp * 0.5)
    invscale = ft(1) / s if s >= 1 else ft(1)
    width = int(math.ceil(support)) * 2 + 1
    center = s * (np.arange(m).astype(ft) + ft(0.5))
    xmin = np.maximum(np.trunc(center - support + ft(0.5)).astype(np.int64), 0)
    xsize = np.clip(np.minimum(np.trunc(center + support + ft(0.5)).astype(np.int64), n) - xmin,
                    0, width)
    j = np.arange(width)[:, None]
    w = _aa_filter((j + xmin - center + ft(0.5)) * invscale, cubic).astype(ft)
    w = np.where(j < xsize, w, ft(0))
    total = w.sum(axis=0)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(ft)
    idx = np.clip(xmin + j, 0, n - 1)
    return [(idx[k], w[k]) for k in range(width)]


def _resample_axis(x: Tensor, axis: int, taps: List[Tuple[Any, Any]], dense: bool) -> Tensor:
    """sum_k take(x, idx_k, axis) * w_k (Note [Separable resampling by gathered taps]), as a
    dense matmul (when `dense` and the axis is short) or one gather of all taps."""
    t = _ts()
    n, m = x.shape[axis], len(taps[0][0])
    if dense and n <= _DENSE_MAX:
        mat = np.zeros((m, n), dtype=np.float64)
        rows = np.arange(m)
        for idx, w in taps:
            np.add.at(mat, (rows, idx), 1.0 if w is None else w.astype(np.float64))
        return _apply_matrix(x, t.asarray(mat, device=x.device).astype(x.dtype), axis)
    g = _GatherAxis.apply(x, np.concatenate([i for i, _ in taps]), axis)
    if len(taps) == 1:
        return g
    k = len(taps)
    rest = tuple(x.shape[axis + 1:])
    g = t.reshape(g, tuple(x.shape[:axis]) + (k, m) + rest)
    w = np.stack([wk for _, wk in taps]).reshape((k, m) + (1,) * len(rest))
    return t.sum(g * t.asarray(w, device=x.device).astype(x.dtype), axis=axis)


def interpolate(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None,
                mode: str = "nearest", align_corners: Optional[bool] = None,
                recompute_scale_factor: Optional[bool] = None, antialias: bool = False) -> Tensor:
    """Resamples (N, C, L), (N, C, H, W) or (N, C, D, H, W) to `size` or by `scale_factor`
    (PyTorch's F.interpolate: modes nearest, nearest-exact, linear (3-D), bilinear and
    bicubic (4-D), trilinear (5-D), area; align_corners only for the interpolating modes;
    antialias=True (bilinear, bicubic) low-pass filters when downsampling, like PIL)."""
    x = input
    if mode not in _MODES:
        raise ValueError(f"interpolate: unknown mode {mode!r} (one of {', '.join(_MODES)})")
    if x.ndim not in (3, 4, 5):
        raise ValueError(f"interpolate: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got "
                         f"shape {tuple(x.shape)}")
    nsp = x.ndim - 2
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != nsp:
        raise ValueError(f"interpolate: mode {mode!r} needs a {_MODE_DIMS[mode] + 2}-D input, got "
                         f"shape {tuple(x.shape)}")
    if mode in ("nearest", "nearest-exact", "area"):
        if align_corners is not None:
            raise ValueError("interpolate: align_corners can only be set with the interpolating "
                             "modes linear, bilinear, bicubic and trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"interpolate: antialias=True is only supported for the bilinear and "
                         f"bicubic modes, got {mode!r}")
    out, scales = _output_size(x, nsp, size, scale_factor, recompute_scale_factor,
                               empty_ok=mode == "area")
    in_sp = tuple(x.shape[2:])
    if mode == "area":
        return getattr(_C, f"adaptive_avg_pool{nsp}d")(x, out)
    t = _ts()
    if mode not in ("nearest", "nearest-exact") and not t.isdtype(x.dtype, "real floating"):
        raise TypeError(f"interpolate: mode {mode!r} needs a floating-point input, got {x.dtype}")
    ft = _ftype(x)
    dense = mode not in ("nearest", "nearest-exact") and bool(t.all(t.isfinite(x)).item())
    y = x
    for i in reversed(range(nsp)):  # the last axis first, while the tensor is smallest
        n, m = in_sp[i], out[i]
        if antialias:
            taps = _aa_taps(n, m, bool(align_corners), scales[i], ft, mode == "bicubic")
        elif mode in ("nearest", "nearest-exact"):
            taps = _nearest_taps(n, m, scales[i], mode == "nearest-exact")
        elif mode == "bicubic":
            taps = _cubic_taps(n, m, bool(align_corners), scales[i], ft)
        else:
            taps = _linear_taps(n, m, bool(align_corners), scales[i], ft)
        if len(taps) == 1 and n == m:
            continue  # identity
        y = _resample_axis(y, 2 + i, taps, dense)
    return y


def upsample(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None,
             mode: str = "nearest", align_corners: Optional[bool] = None) -> Tensor:
    """Deprecated alias of interpolate (PyTorch keeps it)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None) -> Tensor:
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: SizeArg = None, scale_factor: ScaleArg = None) -> Tensor:
    """Bilinear upsampling with align_corners=True (PyTorch's deprecated upsample_bilinear)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
