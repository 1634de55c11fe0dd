"""Pooling (torch.nn.functional's): max/avg pooling of any rank with indices, ceil_mode and
dilation, adaptive average/max pooling, max_unpool, LP pooling and fold/unfold. max/avg pooling
are the C++ bindings themselves and the floating adaptive pools run the C++ pooling ops
(csrc/ops/pool.cpp, gradients in C++); the remaining forms stack shifted strided windows,
differentiable through tessera's autograd."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ... import _C
from ..._C import Tensor
from . import _fused
from .conv import IntOrTuple, _ntuple, pad


# ------------------------------------------------------------------ windows
def _out_size(n: int, k: int, s: int, d: int, ceil_mode: bool = False) -> int:
    span = d * (k - 1) + 1
    if ceil_mode:
        return max(0, -(-(n - span) // s) + 1)
    return max(0, (n - span) // s + 1)


def _windows(xp: Tensor, kernel: Tuple[int, ...], stride: Tuple[int, ...],
             dilation: Tuple[int, ...], out: Tuple[int, ...]) -> Tensor:
    """Stacks the shifted strided slices of the padded input over the last len(kernel)
    axes: (N, C, *spatial) -> (N, C, prod(kernel), *out)."""
    t = _ts()
    nsp = len(kernel)
    lead = (slice(None),) * (xp.ndim - nsp)
    slices = []
    for offs in _offsets(kernel):
        idx = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(offs, dilation, stride, out))
        slices.append(xp[lead + idx])
    return t.stack(slices, axis=xp.ndim - nsp)


def _offsets(kernel: Tuple[int, ...]) -> List[Tuple[int, ...]]:
    offs: List[Tuple[int, ...]] = [()]
    for k in kernel:
        offs = [o + (i,) for o in offs for i in range(k)]
    return offs


# ------------------------------------------------------------------ pooling
def _check_adaptive_sizes(x: Tensor, sizes: Tuple[int, ...], nsp: int, op: str) -> None:
    """PyTorch's output_size check, plus a bound so that an absurd size fails at once instead
    of building one window per output element."""
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size {sizes} must have {nsp} elements")
    if any(m < 0 for m in sizes):
        raise ValueError(f"{op}: elements of output_size must be greater than or equal to 0, "
                         f"got {sizes}")
    shape = tuple(x.shape[:x.ndim - nsp]) + sizes
    if math.prod(shape) >= 2 ** 63:
        raise ValueError(f"{op}: output of shape {shape} has 2^63 or more elements")
    # An output too large for memory raises MemoryError here, before any window is built.
    try:
        _ts().empty(shape, dtype=x.dtype, device=x.device)
    except MemoryError as e:
        raise MemoryError(f"{op}: output of shape {shape}: {e}") from None


# The C++ ops themselves (csrc/python/bind_conv.cpp: PyTorch's signatures, argument forms and
# divisor rules; integer max pooling on the CPU; gradients in C++).
from ..._C import (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,  # noqa: E402,F401
                  max_pool2d_with_indices, max_pool3d_with_indices, avg_pool1d, avg_pool2d,
                  avg_pool3d)


def _adaptive_bounds(n: int, m: int) -> List[Tuple[int, int]]:
    return [((i * n) // m, -(-((i + 1) * n) // m)) for i in range(m)]


def _adaptive_pool(x: Tensor, output_size: Any, nsp: int, reduce: str, op: str) -> Tensor:
    t = _ts()
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    sizes = (output_size,) * nsp if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size {output_size} must have {nsp} elements")
    in_sp = tuple(x.shape[x.ndim - nsp:])
    sizes = tuple(in_sp[i] if sizes[i] is None else int(sizes[i]) for i in range(nsp))
    _check_adaptive_sizes(x, sizes, nsp, op)
    if reduce == "mean" and t.isdtype(x.dtype, "real floating"):
        return _C._adaptive_pool(x, sizes, False, nsp, op)  # the C++ op (csrc/ops/pool.h)
    fn = t.mean if reduce == "mean" else t.max
    lead = (slice(None),) * (x.ndim - nsp)
    if all(n % m == 0 for n, m in zip(in_sp, sizes)):
        # Uniform windows: one reshape and one reduction.
        shape = tuple(x.shape[:x.ndim - nsp])
        for n, m in zip(in_sp, sizes):
            shape += (m, n // m)
        axes = tuple(x.ndim - nsp + 2 * i + 1 for i in range(nsp))
        return fn(t.reshape(x, shape), axis=axes)
    if nsp == 1:
        parts = [fn(x[lead + (slice(a, b),)], axis=-1) for a, b in _adaptive_bounds(in_sp[0], sizes[0])]
        return t.stack(parts, axis=-1)
    rows = []
    for a, b in _adaptive_bounds(in_sp[0], sizes[0]):
        cols = [fn(x[lead + (slice(a, b), slice(c, e))], axis=(-2, -1))
                for c, e in _adaptive_bounds(in_sp[1], sizes[1])]
        rows.append(t.stack(cols, axis=-1))
    return t.stack(rows, axis=-2)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    return _adaptive_pool(input, output_size, 1, "mean", "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Averages over PyTorch's adaptive windows [floor(i*H/h), ceil((i+1)*H/h))."""
    return _adaptive_pool(input, output_size, 2, "mean", "adaptive_avg_pool2d")



def _ts() -> Any:
    import tessera
    return tessera


# ------------------------------------------------------------------ adaptive pooling
def _adaptive_sizes(x: Tensor, output_size: Any, nsp: int, op: str) -> Tuple[int, ...]:
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    sizes = (output_size,) * nsp if isinstance(output_size, int) or output_size is None \
        else tuple(output_size)
    if len(sizes) != nsp:
        raise ValueError(f"{op}: output_size {output_size} must have {nsp} elements")
    in_sp = tuple(x.shape[x.ndim - nsp:])
    sizes = tuple(in_sp[i] if sizes[i] is None else int(sizes[i]) for i in range(nsp))
    _check_adaptive_sizes(x, sizes, nsp, op)
    return sizes


def _adaptive_avg_pool_nd(x: Tensor, out: Sequence[int], nsp: int, op: str) -> Tensor:
    """Adaptive average pooling as one averaging matmul per spatial axis (the windows are
    boxes, so the mean over a box is the product of 1-D means)."""
    t = _ts()
    y = x
    for i in range(nsp):
        axis = x.ndim - nsp + i
        n, m = x.shape[axis], int(out[i])
        if n == m:
            continue
        mat = np.zeros((n, m))
        for j, (a, b) in enumerate(_adaptive_bounds(n, m)):
            mat[a:b, j] = 1.0 / (b - a)
        w = t.asarray(mat, device=x.device).astype(x.dtype)
        y = t.moveaxis(t.matmul(t.moveaxis(y, axis, -1), w), -1, axis)
    return y


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    out = _adaptive_sizes(input, output_size, 3, "adaptive_avg_pool3d")
    if _ts().isdtype(input.dtype, "real floating"):
        return _C._adaptive_pool(input, out, False, 3, "adaptive_avg_pool3d")
    return _adaptive_avg_pool_nd(input, out, 3, "adaptive_avg_pool3d")


def _adaptive_max_indices(x: Tensor, out: Tuple[int, ...], nsp: int) -> Tuple[Tensor, Tensor]:
    """Adaptive max with indices: each output window gathered by fancy indexing of its box."""
    t = _ts()
    in_sp = tuple(x.shape[x.ndim - nsp:])
    lead = tuple(x.shape[:x.ndim - nsp])
    flat = t.reshape(x, lead + (-1,))
    vals, idxs = [], []
    bounds = [_adaptive_bounds(in_sp[i], out[i]) for i in range(nsp)]
    for cell in np.ndindex(*out):
        ranges = [np.arange(*bounds[i][cell[i]]) for i in range(nsp)]
        pos = np.ravel_multi_index(np.meshgrid(*ranges, indexing="ij"), in_sp).ravel()
        win = t.take(flat, t.asarray(pos, device=x.device), axis=-1)
        a = t.argmax(win.detach(), axis=-1, keepdims=True)
        vals.append(t.take_along_axis(win, a, axis=-1))
        idxs.append(t.take(t.asarray(pos, device=x.device), t.reshape(a, (-1,)))
                    .reshape(tuple(a.shape)))
    y = t.reshape(t.concat(vals, axis=-1), lead + out)
    return y, t.reshape(t.concat(idxs, axis=-1), lead + out)


def _adaptive_max_values(x: Tensor, out: Tuple[int, ...], nsp: int) -> Tensor:
    """Adaptive max without indices. Each output's gradient goes to its window's first
    maximum (the element return_indices reports), as in PyTorch; a max reduction over
    several axes would instead split it across tied maxima."""
    t = _ts()
    in_sp = tuple(x.shape[x.ndim - nsp:])
    if not all(n % m == 0 for n, m in zip(in_sp, out)):
        return _adaptive_max_indices(x, out, nsp)[0]
    # Uniform windows: split each spatial axis into (out, kernel), move the kernel axes
    # last and flatten them, so one argmax + gather covers every window (row-major order
    # within a window, so the first maximum matches _adaptive_max_indices).
    lead = tuple(x.shape[:x.ndim - nsp])
    shape = lead
    for n, m in zip(in_sp, out):
        shape += (m, n // m)
    nl = len(lead)
    perm = tuple(range(nl)) + tuple(nl + 2 * i for i in range(nsp)) \
        + tuple(nl + 2 * i + 1 for i in range(nsp))
    win = t.reshape(t.permute_dims(t.reshape(x, shape), perm), lead + tuple(out) + (-1,))
    a = t.argmax(win.detach(), axis=-1, keepdims=True)
    return t.squeeze(t.take_along_axis(win, a, axis=-1), axis=-1)


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    out = _adaptive_sizes(input, output_size, 1, "adaptive_max_pool1d")
    if _ts().isdtype(input.dtype, "real floating"):  # the C++ op (csrc/ops/pool.h)
        y, idx = _C._adaptive_pool(input, out, True, 1, "adaptive_max_pool1d")
        return (y, idx) if return_indices else y
    if return_indices:
        return _adaptive_max_indices(input, out, 1)
    return _adaptive_max_values(input, out, 1)


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    out = _adaptive_sizes(input, output_size, 2, "adaptive_max_pool2d")
    if _ts().isdtype(input.dtype, "real floating"):  # the C++ op (csrc/ops/pool.h)
        y, idx = _C._adaptive_pool(input, out, True, 2, "adaptive_max_pool2d")
        return (y, idx) if return_indices else y
    if return_indices:
        return _adaptive_max_indices(input, out, 2)
    return _adaptive_max_values(input, out, 2)


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    out = _adaptive_sizes(input, output_size, 3, "adaptive_max_pool3d")
    if _ts().isdtype(input.dtype, "real floating"):  # the C++ op (csrc/ops/pool.h)
        y, idx = _C._adaptive_pool(input, out, True, 3, "adaptive_max_pool3d")
        return (y, idx) if return_indices else y
    if return_indices:
        return _adaptive_max_indices(input, out, 3)
    return _adaptive_max_values(input, out, 3)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = True) -> Any:
    return adaptive_max_pool3d(input, output_size, True)


# ------------------------------------------------------------------ unpooling
def _unpool_args(stride: Optional[IntOrTuple], padding: IntOrTuple,
                 output_size: Optional[Sequence[int]]) -> Tuple[Any, Any, Any]:
    s = None if stride is None or stride == [] else stride
    return s, padding, None if output_size is None else [int(v) for v in output_size]


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple,
                 stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of max_pool1d: (N, C, L_in) values placed at their flat indices
    of (N, C, L_out) planes, zeros elsewhere; L_out = (L_in - 1) stride - 2 padding + kernel
    unless output_size says otherwise. IndexError for an index outside the plane."""
    s, p, o = _unpool_args(stride, padding, output_size)
    return _C._max_unpool(input, indices, kernel_size, s, p, o, 1, "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple,
                 stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of max_pool2d: (N, C, H_in, W_in) values placed at their flat
    indices of (N, C, H_out, W_out) planes, zeros elsewhere."""
    s, p, o = _unpool_args(stride, padding, output_size)
    return _C._max_unpool(input, indices, kernel_size, s, p, o, 2, "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: IntOrTuple,
                 stride: Optional[IntOrTuple] = None, padding: IntOrTuple = 0,
                 output_size: Optional[Sequence[int]] = None) -> Tensor:
    """The partial inverse of max_pool3d: (N, C, D_in, H_in, W_in) values placed at their
    flat indices of (N, C, D_out, H_out, W_out) planes, zeros elsewhere."""
    s, p, o = _unpool_args(stride, padding, output_size)
    return _C._max_unpool(input, indices, kernel_size, s, p, o, 3, "max_unpool3d")


# ------------------------------------------------------------------ LP pooling
def lp_pool1d(input: Tensor, norm_type: float, kernel_size: IntOrTuple,
              stride: Optional[IntOrTuple] = None, ceil_mode: bool = False) -> Tensor:
    """(N, C, L) -> (N, C, L_out): (sum over each window of x^p)^(1/p) (PyTorch's formula:
    the window's average times its full size); p = inf is the max of |x|."""
    s = None if stride is None or stride == [] else stride
    return _C._lp_pool(input, float(norm_type), kernel_size, s, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: IntOrTuple,
              stride: Optional[IntOrTuple] = None, ceil_mode: bool = False) -> Tensor:
    """(N, C, H, W) -> (N, C, H_out, W_out): the p-norm of each window, as lp_pool1d."""
    s = None if stride is None or stride == [] else stride
    return _C._lp_pool(input, float(norm_type), kernel_size, s, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: IntOrTuple,
              stride: Optional[IntOrTuple] = None, ceil_mode: bool = False) -> Tensor:
    """(N, C, D, H, W) -> (N, C, D_out, H_out, W_out): the p-norm of each window."""
    s = None if stride is None or stride == [] else stride
    return _C._lp_pool(input, float(norm_type), kernel_size, s, ceil_mode, 3, "lp_pool3d")


# ------------------------------------------------------------------ fold / unfold
def _fold_geom(kernel_size: IntOrTuple, dilation: IntOrTuple, padding: IntOrTuple,
               stride: IntOrTuple, op: str) -> Tuple[Tuple[int, ...], ...]:
    k, d = _ntuple(kernel_size, 2, op), _ntuple(dilation, 2, op)
    p, s = _ntuple(padding, 2, op), _ntuple(stride, 2, op)
    if any(v <= 0 for v in k + d + s) or any(v < 0 for v in p):
        raise ValueError(f"{op}: kernel_size {k}, dilation {d} and stride {s} must be positive "
                         f"and padding {p} non-negative")
    return k, d, p, s


def unfold(input: Tensor, kernel_size: IntOrTuple, dilation: IntOrTuple = 1,
           padding: IntOrTuple = 0, stride: IntOrTuple = 1) -> Tensor:
    """Sliding local blocks: (N, C, H, W) or (C, H, W) -> (N, C*kh*kw, L) (im2col)."""
    t = _ts()
    x = input
    k, d, p, s = _fold_geom(kernel_size, dilation, padding, stride, "unfold")
    if x.ndim not in (3, 4):
        raise ValueError(f"unfold: expected a 3-D or 4-D input (N, C, H, W), got shape "
                         f"{tuple(x.shape)}")
    unbatched = x.ndim == 3
    if unbatched:
        x = t.expand_dims(x, axis=0)
    n, c, h, w = x.shape
    out = (_out_size(h + 2 * p[0], k[0], s[0], d[0]), _out_size(w + 2 * p[1], k[1], s[1], d[1]))
    if (h + 2 * p[0] < d[0] * (k[0] - 1) + 1 or w + 2 * p[1] < d[1] * (k[1] - 1) + 1
            or 0 in out):
        raise ValueError(f"unfold: kernel {k} with dilation {d} does not fit the padded input "
                         f"of spatial size {(h + 2 * p[0], w + 2 * p[1])}")
    xp = pad(x, [p[1], p[1], p[0], p[0]]) if any(p) else x
    cols = t.reshape(_windows(xp, k, s, d, out), (n, c * k[0] * k[1], out[0] * out[1]))
    return cols[0] if unbatched else cols


def fold(input: Tensor, output_size: IntOrTuple, kernel_size: IntOrTuple,
         dilation: IntOrTuple = 1, padding: IntOrTuple = 0, stride: IntOrTuple = 1) -> Tensor:
    """Sums sliding local blocks back into (N, C, H, W) (col2im, unfold's adjoint):
    (N, C*kh*kw, L) or (C*kh*kw, L) -> (N, C, *output_size)."""
    t = _ts()
    x = input
    k, d, p, s = _fold_geom(kernel_size, dilation, padding, stride, "fold")
    osz = _ntuple(output_size, 2, "fold")
    if x.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D or 3-D input (N, C*kh*kw, L), got shape "
                         f"{tuple(x.shape)}")
    unbatched = x.ndim == 2
    if unbatched:
        x = t.expand_dims(x, axis=0)
    kk = k[0] * k[1]
    blocks = [_out_size(osz[i] + 2 * p[i], k[i], s[i], d[i]) for i in range(2)]
    if x.shape[1] % kk or x.shape[2] != blocks[0] * blocks[1]:
        raise ValueError(f"fold: input of shape {tuple(input.shape)} does not match "
                         f"kernel_size {k} (channels divisible by {kk}) and "
                         f"{blocks[0] * blocks[1]} blocks for output_size {osz}")
    c = x.shape[1] // kk
    if _fused.fusable_windows(x) and str(x.dtype) in _fused.CONV_DTYPES:
        y = _fused.Col2im.apply(x, c, osz[0], osz[1], k, s, p, d)
    else:
        y = _fold_composite(x, c, osz, k, d, p, s, blocks)
    return y[0] if unbatched else y


def _fold_composite(x: Tensor, c: int, osz: Tuple[int, ...], k: Tuple[int, ...],
                    d: Tuple[int, ...], p: Tuple[int, ...], s: Tuple[int, ...],
                    blocks: List[int]) -> Tensor:
    """col2im by index_add of every block entry into the flat padded plane."""
    t = _ts()
    n = x.shape[0]
    hp, wp = osz[0] + 2 * p[0], osz[1] + 2 * p[1]
    ki, kj, bi, bj = np.meshgrid(np.arange(k[0]), np.arange(k[1]), np.arange(blocks[0]),
                                 np.arange(blocks[1]), indexing="ij")
    pos = ((bi * s[0] + ki * d[0]) * wp + bj * s[1] + kj * d[1]).reshape(-1)
    vals = t.reshape(x, (n, c, -1))
    zero = t.zeros((n, c, hp * wp), dtype=x.dtype, device=x.device)
    y = t.reshape(t.index_add(zero, 2, t.asarray(pos, device=x.device), vals), (n, c, hp, wp))
    return y[:, :, p[0]:p[0] + osz[0], p[1]:p[1] + osz[1]]
