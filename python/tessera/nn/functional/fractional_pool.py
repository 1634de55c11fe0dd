"""fractional_max_pool2d / fractional_max_pool3d: max pooling over pseudo-random windows
(Graham's fractional max-pooling) with PyTorch's window sequence, so the same
`_random_samples` give the same windows, values and indices."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from ..._C import Tensor
from .. import _rng
from .conv import IntOrTuple, _ntuple


def _ts() -> Any:
    import tessera
    return tessera


def _intervals(sample: Any, n: int, m: int, k: int, ft: Any) -> Any:
    """Window starts along one axis for samples of any shape (PyTorch's generate_intervals,
    in the input's float type): start_i = int((i + u) alpha) - int(u alpha), alpha =
    (n - k) / (m - 1), and the last window ends at the input's end. Shape sample.shape + (m,)."""
    u = np.asarray(sample, dtype=ft)[..., None]
    seq = np.zeros(u.shape[:-1] + (m,), dtype=np.int64)
    if m > 1:
        alpha = ft(n - k) / ft(m - 1)
        i = np.arange(m - 1).astype(ft)
        seq[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    if m > 0:
        seq[..., -1] = n - k
    return seq


def _fractional_max_pool(x: Tensor, kernel_size: IntOrTuple, output_size: Any,
                         output_ratio: Any, return_indices: bool, samples: Optional[Tensor],
                         nsp: int, op: str) -> Any:
    t = _ts()
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    if not t.isdtype(x.dtype, "real floating"):
        raise TypeError(f"{op}: expected a floating-point input, got {x.dtype}")
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = t.expand_dims(x, axis=0)
    n, c = x.shape[0], x.shape[1]
    in_sp = tuple(x.shape[2:])
    k = _ntuple(kernel_size, nsp, op)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op}: requires specifying either an output_size or an "
                             f"output_ratio")
        ratio = (output_ratio,) * nsp if isinstance(output_ratio, (int, float)) \
            else tuple(output_ratio)
        out = tuple(int(in_sp[i] * float(ratio[i])) for i in range(nsp))
    else:
        out = _ntuple(output_size, nsp, op)
    for i in range(nsp):
        if out[i] + k[i] - 1 > in_sp[i] or out[i] <= 0 or k[i] <= 0:
            raise ValueError(f"{op}: output size {out} with kernel size {k} is too large for "
                             f"input size {in_sp}")
    if samples is None:
        samples = _rng.uniform(0.0, 1.0, (n, c, nsp), x.dtype)
    elif tuple(samples.shape) != (n, c, nsp):
        raise ValueError(f"{op}: _random_samples must have shape {(n, c, nsp)}, got "
                         f"{tuple(samples.shape)}")
    ft = np.float64 if str(x.dtype).endswith("float64") else np.float32
    smp = np.asarray(samples.numpy(), dtype=ft)
    # PyTorch's sample order: (w, h) in 2-D, (t, h, w) in 3-D
    order = (1, 0) if nsp == 2 else (0, 1, 2)
    kk = int(np.prod(k))
    # flat input index of (plane, output position, window offset), built by broadcasting
    flat_idx = np.zeros((n, c) + out + k, dtype=np.int64)
    for i in range(nsp):
        starts = _intervals(smp[:, :, order[i]], in_sp[i], out[i], k[i], ft)  # (n, c, m_i)
        pos = starts.reshape((n, c) + tuple(out[i] if j == i else 1 for j in range(nsp))
                             + (1,) * nsp)
        off = np.arange(k[i]).reshape((1, 1) + (1,) * nsp
                                      + tuple(k[i] if j == i else 1 for j in range(nsp)))
        flat_idx = flat_idx * in_sp[i] + pos + off
    idx = t.asarray(flat_idx.reshape(n, c, -1), device=x.device)
    vals = t.take_along_axis(t.reshape(x, (n, c, -1)), idx, axis=2)
    vals = t.reshape(vals, (n, c, -1, kk))
    y = t.max(vals, axis=-1)
    arg = t.argmax(vals.detach(), axis=-1, keepdims=True)
    ind = t.take_along_axis(t.reshape(idx, (n, c, -1, kk)), arg, axis=-1)
    y = t.reshape(y, (n, c) + out)
    ind = t.reshape(ind, (n, c) + out)
    if unbatched:
        y, ind = y[0], ind[0]
    return (y, ind) if return_indices else y


def fractional_max_pool2d(input: Tensor, kernel_size: IntOrTuple, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Optional[Tensor] = None) -> Any:
    """Fractional max pooling of (N, C, H, W) or (C, H, W) to output_size (or
    input size * output_ratio); `_random_samples` (N, C, 2) in [0, 1) fix the windows."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2, "fractional_max_pool2d")


def fractional_max_pool3d(input: Tensor, kernel_size: IntOrTuple, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Optional[Tensor] = None) -> Any:
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W); samples (N, C, 3)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3, "fractional_max_pool3d")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: IntOrTuple,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = True,
                                       _random_samples: Optional[Tensor] = None
                                       ) -> Tuple[Tensor, Tensor]:
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: IntOrTuple,
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = True,
                                       _random_samples: Optional[Tensor] = None
                                       ) -> Tuple[Tensor, Tensor]:
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)
