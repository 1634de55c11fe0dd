"""dropout1d, dropout3d, alpha_dropout, feature_alpha_dropout (PyTorch's masks and SELU-
preserving affine correction); masks come from the fused dropout op's generator."""
from __future__ import annotations

import math
from typing import Any, Tuple

from ... import _C
from ..._C import Tensor
from .misc import _check_p, _generator

_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU


def _ts() -> Any:
    import tessera
    return tessera


def _keep_mask(shape: Tuple[int, ...], p: float, like: Tensor) -> Tensor:
    """A bool tensor of `shape`, True with probability 1 - p."""
    t = _ts()
    _, mask = _C._dropout(t.ones(shape, dtype=like.dtype, device=like.device), p, _generator(),
                          False)
    return mask


def _feature_dropout(x: Tensor, p: float, training: bool, inplace: bool, nsp: int,
                     op: str) -> Tensor:
    p = _check_p(p, op)
    if x.ndim not in (nsp + 1, nsp + 2):
        raise ValueError(f"{op}: expected a {nsp + 1}-D or {nsp + 2}-D input, got shape "
                         f"{tuple(x.shape)}")
    if not training or p == 0.0:
        return x
    t = _ts()
    shape = tuple(x.shape[:x.ndim - nsp]) + (1,) * nsp
    keep = t.where(_keep_mask(shape, p, x), 1.0 / (1.0 - p) if p < 1 else 0.0, 0.0).astype(x.dtype)
    if inplace:
        x *= keep
        return x
    return x * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the
    rest by 1/(1-p)."""
    return _feature_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""
    return _feature_dropout(input, p, training, inplace, 3, "dropout3d")


def _alpha_dropout(x: Tensor, p: float, training: bool, inplace: bool, feature: bool,
                   op: str) -> Tensor:
    p = _check_p(p, op)
    if not training or p == 0.0 or x.size == 0:
        return x
    t = _ts()
    if p == 1.0:
        y = x * 0.0
    else:
        if feature and x.ndim < 2:
            raise ValueError(f"{op}: expected an input of at least 2 dims (N, C, *), got shape "
                             f"{tuple(x.shape)}")
        shape = (tuple(x.shape[:2]) + (1,) * (x.ndim - 2)) if feature else tuple(x.shape)
        keep = _keep_mask(shape, p, x)
        al = _SELU_ALPHA_PRIME
        a = 1.0 / math.sqrt((al * al * p + 1) * (1 - p))
        # kept: a x + alpha a p; dropped: alpha a (p - 1)
        scale = t.where(keep, a, 0.0).astype(x.dtype)
        shift = t.where(keep, al * a * p, al * a * (p - 1)).astype(x.dtype)
        y = x * scale + shift
    if inplace:
        x[...] = y
        return x
    return y


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's zero mean and unit variance: dropped values become SELU's
    negative saturation, then an affine map restores the statistics."""
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels of (N, C, *) input."""
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")
