"""Dropout: dropout (the C++ op), dropout1d/2d/3d (whole channels), alpha_dropout and
feature_alpha_dropout (PyTorch's masks and SELU-preserving affine correction); every mask comes
from the counter-based generator through the fused dropout op."""
from __future__ import annotations

import math
from typing import Any, Tuple

from ... import _C
from ..._C import Tensor

_SELU_ALPHA_PRIME = 1.7580993408473766  # -scale * alpha of SELU


def _ts() -> Any:
    import tessera
    return tessera


def _generator() -> Any:
    """The C++ generator nn's random numbers come from (ts.random's default)."""
    from ... import random as _random
    return _random.default_generator._g


def _check_p(p: float, op: str) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: probability has to be between 0 and 1, but got {p}")
    return p


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability p and scales the rest by 1/(1-p) (training only;
    p = 1 gives zeros), any shape. The mask is drawn on x's device from the counter-based
    generator (the same mask on every device for one seed; the C++ op
    csrc/ops/nn/embedding.h). With `inplace` x itself is overwritten and returned."""
    if not training or not p:  # x itself (PyTorch returns the input object)
        _check_p(p, "dropout")
        return input
    if not inplace:
        return _C.dropout(input, p, generator=_generator())
    if _C.is_grad_enabled() and input.requires_grad:
        # Written like x[...] = dropout(x), so autograd rebinds x's history (or refuses a leaf).
        input[...] = _C.dropout(input, p, generator=_generator())
    else:
        _C.dropout(input, p, True, True, generator=_generator())
    return input


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p and scales
    the rest by 1/(1-p); the channel mask is drawn on x's device."""
    p = _check_p(p, "dropout2d")
    if not training or p == 0.0:
        return input
    t = _ts()
    shape = tuple(input.shape[:-2]) + (1, 1)
    # Dropout of ones: each channel's factor is 0 or 1/(1-p), drawn by the fused op.
    keep, _ = _C._dropout(t.ones(shape, dtype=input.dtype, device=input.device), p, _generator(),
                          False)
    if inplace:
        input *= keep
        return input
    return input * keep


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
