"""affine_grid and grid_sample (4-D: bilinear, nearest, bicubic; 5-D: bilinear, nearest)
with PyTorch's coordinate conventions and padding modes (zeros, border, reflection).

Note [Sampling by gathered corners]
Grid coordinates in [-1, 1] are unnormalized to pixel positions (align_corners picks
whether -1/1 name the corner pixels' centres or their outer edges), then padded (border
clamps, reflection mirrors) and split into integer corners and fractional weights. The
corner values are gathered from the flattened (N, C, H*W) input with take_along_axis, out-
of-range corners are masked to zero, and the weighted sum is the output. The weights are
differentiable functions of the grid (floor only picks the corners), so both the input
and the grid receive PyTorch's gradients.
"""
from __future__ import annotations

import math
from typing import Any, List, Sequence, Tuple

from ..._C import Tensor

_CUBIC_A = -0.75


def _ts() -> Any:
    import tessera
    return tessera


def _base_coords(n: int, align_corners: bool) -> Any:
    import numpy as np
    if n <= 1:
        return np.zeros(max(n, 0))
    if align_corners:
        return np.linspace(-1.0, 1.0, n)
    return (np.arange(n) * 2.0 + 1.0) / n - 1.0


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool = False) -> Tensor:
    """Sampling grids for batches of affine maps: theta (N, 2, 3) with size (N, C, H, W) ->
    (N, H, W, 2), or theta (N, 3, 4) with size (N, C, D, H, W) -> (N, D, H, W, 3)."""
    import numpy as np
    t = _ts()
    from ..._arg_checks import int_arg
    if not isinstance(theta, Tensor):
        raise TypeError(f"affine_grid: argument 'theta' must be a tensor, not "
                        f"{type(theta).__name__}")
    size = tuple(int_arg("affine_grid", "size", s) for s in size)
    if len(size) not in (4, 5):
        raise ValueError(f"affine_grid: size must have 4 or 5 elements (N, C, *spatial), got "
                         f"{size}")
    k = len(size) - 2
    if not t.isdtype(theta.dtype, "real floating"):
        raise TypeError(f"affine_grid: theta must be floating point, got {theta.dtype}")
    if tuple(theta.shape) != (size[0], k, k + 1):
        raise ValueError(f"affine_grid: expected theta of shape ({size[0]}, {k}, {k + 1}) for "
                         f"size {size}, got {tuple(theta.shape)}")
    if min(size[2:]) <= 0:
        raise ValueError(f"affine_grid: spatial sizes must be positive, got {size}")
    from ..._arg_checks import check_output_size
    check_output_size("affine_grid", (size[0],) + size[2:] + (k,), theta.dtype, theta.device)
    axes = [_base_coords(s, align_corners) for s in size[2:]]  # depth/height/width order
    mesh = np.meshgrid(*axes, indexing="ij")
    # homogeneous coordinates in (x, y[, z]) order: x is the last (width) axis
    base = np.stack(list(reversed(mesh)) + [np.ones_like(mesh[0])], axis=-1)
    base_t = t.asarray(base.reshape(-1, k + 1), device=theta.device).astype(theta.dtype)
    grid = t.matmul(base_t, t.permute_dims(theta, (0, 2, 1)))  # (N, P, k)
    return t.reshape(grid, (size[0],) + size[2:] + (k,))


# ------------------------------------------------------------------ coordinates
def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) * ((n - 1) / 2)
    return ((coord + 1) * n - 1) / 2


def _reflect(x: Tensor, lo: float, hi: float) -> Tensor:
    """Reflects x into [lo, hi] (PyTorch's reflect_coordinates, over twice-scaled bounds)."""
    t = _ts()
    if hi <= lo:
        return t.zeros_like(x) + lo
    span = hi - lo
    y = t.abs(x - lo)
    flips = t.floor(y / span)
    extra = y - flips * span
    even = t.remainder(flips, 2) == 0
    return t.where(even, extra + lo, span - extra + lo)


def _pad_coord(x: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    t = _ts()
    if padding_mode == "border":
        return t.clip(x, 0, n - 1)
    if padding_mode == "reflection":
        if align_corners:
            x = _reflect(x, 0.0, float(n - 1))
        else:
            x = _reflect(x, -0.5, n - 0.5)
        return t.clip(x, 0, n - 1)
    return x


# ------------------------------------------------------------------ sampling
def _gather(flat: Tensor, idx: Tensor) -> Tensor:
    """flat (N, C, P), idx (N, Q) int64 -> (N, C, Q)."""
    t = _ts()
    n, c = flat.shape[0], flat.shape[1]
    ix = t.broadcast_to(t.expand_dims(idx, axis=1), (n, c, idx.shape[1]))
    return t.take_along_axis(flat, ix, axis=2)


def _corner(flat: Tensor, coords: List[Tensor], dims: Tuple[int, ...], weight: Tensor) -> Tensor:
    """weight * input at the integer corner `coords` (per spatial axis, (N, Q) float), zero
    where a coordinate is outside the input."""
    t = _ts()
    inside = None
    lin = None
    for c, n in zip(coords, dims):
        ok = (c >= 0) & (c <= n - 1)
        inside = ok if inside is None else inside & ok
        ci = t.clip(c, 0, n - 1).astype(t.int64)
        lin = ci if lin is None else lin * n + ci
    vals = _gather(flat, lin)
    w = t.where(inside, weight, 0.0)
    return vals * t.expand_dims(w, axis=1)


def _cubic_weights(tt_: Tensor) -> List[Tensor]:
    a = _CUBIC_A

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(tt_ + 1), near(tt_), near(1 - tt_), far(2 - tt_)]


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Samples input (N, C, H, W) at grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo) (5-D: grid
    (N, Do, Ho, Wo, 3)); grid[..., 0] is x (width), in [-1, 1] (Note [Sampling by gathered
    corners])."""
    t = _ts()
    x = input
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"grid_sample: mode must be 'bilinear', 'nearest' or 'bicubic', got "
                         f"{mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample: padding_mode must be 'zeros', 'border' or 'reflection', "
                         f"got {padding_mode!r}")
    if x.ndim not in (4, 5) or grid.ndim != x.ndim or grid.shape[0] != x.shape[0] \
            or grid.shape[-1] != x.ndim - 2:
        raise ValueError(f"grid_sample: expected input (N, C, H, W) with grid (N, Ho, Wo, 2) or "
                         f"input (N, C, D, H, W) with grid (N, Do, Ho, Wo, 3), got "
                         f"{tuple(x.shape)} and {tuple(grid.shape)}")
    if mode == "bicubic" and x.ndim != 4:
        raise ValueError("grid_sample: mode 'bicubic' supports only 4-D input")
    ac = bool(align_corners)
    k = x.ndim - 2
    n, c = x.shape[0], x.shape[1]
    dims = tuple(x.shape[2:])  # (H, W) or (D, H, W)
    out_sp = tuple(grid.shape[1:-1])
    q = math.prod(out_sp)
    g = t.reshape(grid, (n, q, k)).astype(x.dtype)
    # per spatial axis in input order (d, h, w): grid components are (x, y[, z]) reversed
    pos = [_unnormalize(g[..., k - 1 - i], dims[i], ac) for i in range(k)]
    flat = t.reshape(x, (n, c, -1))
    if mode == "bicubic":
        # bicubic pads each tap coordinate, not the sample position
        fl = [t.floor(p.detach()) for p in pos]
        fr = [p - f for p, f in zip(pos, fl)]
        wy, wx = _cubic_weights(fr[0]), _cubic_weights(fr[1])
        out = None
        for i in range(4):
            for j in range(4):
                cy = _pad_coord(fl[0] + (i - 1), dims[0], padding_mode, ac)
                cx = _pad_coord(fl[1] + (j - 1), dims[1], padding_mode, ac)
                term = _corner(flat, [cy, cx], dims, wy[i] * wx[j])
                out = term if out is None else out + term
        return t.reshape(out, (n, c) + out_sp)
    pos = [_pad_coord(p, d, padding_mode, ac) for p, d in zip(pos, dims)]
    if mode == "nearest":
        idx = [t.round(p.detach()) for p in pos]  # round half to even, as PyTorch
        one = t.ones_like(pos[0])
        return t.reshape(_corner(flat, idx, dims, one), (n, c) + out_sp)
    fl = [t.floor(p.detach()) for p in pos]
    fr = [p - f for p, f in zip(pos, fl)]
    out = None
    for corner in range(2 ** k):
        bits = [(corner >> (k - 1 - i)) & 1 for i in range(k)]
        w = None
        for b, f in zip(bits, fr):
            wi = f if b else 1 - f
            w = wi if w is None else w * wi
        coords = [f + b for f, b in zip(fl, bits)]
        term = _corner(flat, coords, dims, w)
        out = term if out is None else out + term
    return t.reshape(out, (n, c) + out_sp)
