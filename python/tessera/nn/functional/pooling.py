"""Pooling (torch.nn.functional's): max/avg pooling of any rank with indices, ceil_mode and
dilation, adaptive average/max pooling, max_unpool and LP pooling are the C++ bindings
themselves (csrc/ops/pool.cpp, gradients in C++); fold/unfold stack shifted strided windows,
differentiable through tessera's autograd."""
from __future__ import annotations

from typing import Any, List, Tuple

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
# The C++ ops themselves (csrc/python/bind_conv.cpp, bind_pool.cpp: PyTorch's signatures,
# argument forms, checks and gradients in csrc/ops/pool.cpp).
from ..._C import (max_pool1d, max_pool2d, max_pool3d, max_pool1d_with_indices,  # noqa: E402,F401
                  max_pool2d_with_indices, max_pool3d_with_indices, avg_pool1d, avg_pool2d,
                  avg_pool3d, adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                  adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
                  adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
                  adaptive_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
                  lp_pool1d, lp_pool2d, lp_pool3d)


def _ts() -> Any:
    import tessera
    return tessera


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
