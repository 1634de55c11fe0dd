"""Flattening parameters into one vector and back."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Iterable

from ..._C import Tensor


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated (differentiable)."""
    import tessera as t
    return t.concat([t.reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copies consecutive slices of `vec` into the parameters, in place."""
    import tessera as t
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        raise TypeError(f"vector_to_parameters: expected a 1-D Tensor, got {type(vec).__name__}")
    params = list(parameters)
    total = sum(p.size for p in params)
    if total != vec.shape[0]:
        raise ValueError(f"vector_to_parameters: vector of length {vec.shape[0]} does not match "
                         f"the {total} parameter elements")
    offset = 0
    with t.no_grad():
        for p in params:
            n = p.size
            p[...] = t.reshape(vec[offset:offset + n], tuple(p.shape))
            offset += n
