"""Random numbers for nn.init and the data samplers: ts.random when this build has it, else a
NumPy Generator seeded by :func:`manual_seed`. Dropout does not come here: it draws on its
input's device through the fused op (nn.functional.dropout), from ts.random's generator."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._C import Tensor

_np_gen = np.random.default_rng(0)


def _ts() -> Any:
    import tessera
    return tessera


def _random() -> Any:
    r = getattr(_ts(), "random", None)
    return r if r is not None and hasattr(r, "uniform") and hasattr(r, "normal") else None


def manual_seed(seed: int) -> None:
    """Seeds the generator behind nn's random numbers (and ts.random when present)."""
    global _np_gen
    _np_gen = np.random.default_rng(seed)
    r = _random()
    if r is not None and hasattr(r, "manual_seed"):
        r.manual_seed(seed)


def _np_dtype(dtype: Any) -> Any:
    from .. import float32
    dt = float32 if dtype is None else dtype
    return np.dtype(str(dt).replace("tessera.", ""))


def _draw(kind: str, a: float, b: float, shape: Sequence[int], dtype: Any) -> Tensor:
    r = _random()
    shape = tuple(int(s) for s in shape)
    if r is not None:
        return getattr(r, kind)(a, b, shape, dtype=dtype)
    vals = getattr(_np_gen, kind)(a, b, shape)
    return _ts().asarray(vals, dtype=dtype if dtype is not None else _ts().float32)


def uniform(low: float, high: float, shape: Sequence[int], dtype: Any = None) -> Tensor:
    """Uniform numbers in [low, high) of `shape` (default float32)."""
    return _draw("uniform", low, high, shape, dtype)


def normal(mean: float, std: float, shape: Sequence[int], dtype: Any = None) -> Tensor:
    """Normal numbers of `shape` (default float32)."""
    return _draw("normal", mean, std, shape, dtype)


def permutation(n: int) -> np.ndarray:
    """A random permutation of range(n) as a NumPy int64 array (for samplers)."""
    r = _random()
    if r is not None and hasattr(r, "randperm"):
        return np.asarray(r.randperm(n).numpy())
    return _np_gen.permutation(n)
