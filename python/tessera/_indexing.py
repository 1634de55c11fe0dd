"""Index-based selection and update: take (array API and torch), nonzero / argwhere, and
PyTorch's index_fill / index_copy / index_put / scatter_reduce / masked_scatter / put / the
*_scatter family / nonzero_static, with the matching Tensor methods. All are C++ functions
with their argument forms parsed in the bindings (csrc/python/bind_search.cpp,
csrc/python/bind_index_forms.cpp); this module gathers them into the namespace and holds
fill_diagonal_, unravel_index and index_reduce.

``ts.nonzero(x)`` follows the standard (and NumPy): a tuple of ``x.ndim`` int64 index
tensors. The method ``x.nonzero()`` follows PyTorch: one ``(count, x.ndim)`` int64 tensor
(``x.nonzero(as_tuple=True)`` gives the standard's tuple). ``ts.argwhere(x)`` is NumPy's name
for the PyTorch form.

Indices may be negative (counted from the end) in every function here, as in NumPy; an
out-of-range index raises IndexError naming the axis, the index and the size.
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence, Tuple, Union

from . import _C
from ._C import Tensor
from ._C import (  # noqa: F401  (the C++ functions: csrc/python/bind_search.cpp)
    argwhere, gather, index_add, index_copy, index_fill, index_select, masked_fill,
    masked_select, nonzero, scatter, scatter_add, take_along_axis,
)
from ._C import (  # noqa: F401  (csrc/python/bind_index_forms.cpp)
    diagonal_scatter, index_put, masked_scatter, nonzero_static, put, scatter_reduce,
    select_scatter, slice_scatter, take,
)

__all__ = ["take", "take_along_axis", "nonzero", "argwhere", "gather", "scatter",
           "scatter_add", "index_select", "index_add", "masked_fill", "masked_select"]

# ---- PyTorch's indexing functions (scatter_reduce, index_put, masked_scatter, put and their
# methods and in-place forms are C++: csrc/python/bind_index_forms.cpp)
_TORCH_NAMES = ["index_fill", "index_copy"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES + ["scatter_reduce", "index_put", "masked_scatter", "put",
                          "select_scatter", "slice_scatter", "diagonal_scatter", "nonzero_static"]


def _ts() -> Any:
    import tessera
    return tessera


METHODS: dict = {}  # (every method of this family is C++ now)


# ---- x.fill_diagonal_
def _fill_diagonal_(self: Tensor, fill_value: Any, wrap: builtins.bool = False) -> Tensor:
    """Fills the main diagonal (all dims equal for ndim > 2) with fill_value; wrap=True
    continues below a tall matrix every ncols + 1 rows, like torch/NumPy."""
    from ._inplace import check_leaf, write
    check_leaf(self, "fill_diagonal_")
    if self.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("fill_diagonal_: all dimensions of input must be of equal length")
    n = builtins.min(self.shape)
    if self.ndim == 2:
        rows = list(range(n))
        if wrap and self.shape[0] > self.shape[1]:
            step = self.shape[1] + 1
            rows = []
            r = 0
            while r < self.shape[0]:
                rows += list(range(r, builtins.min(r + self.shape[1], self.shape[0])))
                r += step
        cols = [r % (self.shape[1] + 1) if wrap else r for r in rows]
        idx = (_ts().asarray(rows, dtype=_C.int64), _ts().asarray(cols, dtype=_C.int64))
    else:
        idx = tuple(_ts().arange(n) for _ in range(self.ndim))
    out = self.clone()
    if idx[0].shape[0]:
        out[idx] = _C._astype(_ts().asarray(fill_value), self.dtype, True)
    return write(self, out, "fill_diagonal_")


# ---- torch.unravel_index
def unravel_index(indices: Any, shape: Union[int, Sequence[int]]) -> Tuple[Tensor, ...]:
    """The coordinate tensors of flat `indices` into an array of `shape` (torch.unravel_index:
    flat indices outside [0, prod(shape)) wrap around as torch's do)."""
    ts = _ts()
    if not isinstance(indices, Tensor):
        indices = ts.asarray(indices)
    if ts.isdtype(indices.dtype, ("real floating", "complex floating")) or indices.dtype == ts.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # As torch: out-of-range and negative flat indices wrap (floor division and modulo).
    idx = indices.astype(ts.int64)
    out = []
    for s in reversed(shape):
        out.append(idx % s if s else idx)
        idx = idx // s if s else idx
    return tuple(reversed(out))


_TORCH_NAMES += ["unravel_index"]
__all__ += ["unravel_index"]


# ---- x.index_reduce
def _index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """Reduces the slices of `source` along `dim` into self's slices ``index[i]`` with
    'prod', 'mean', 'amax' or 'amin' (torch.Tensor.index_reduce)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = dim % max(self.ndim, 1)
    shape = [1] * source.ndim
    shape[d] = index.shape[0]
    full = _ts().broadcast_to(index.reshape(tuple(shape)), tuple(source.shape))
    return self.scatter_reduce(d, full, source, reduce, include_self=include_self)


def _index_reduce_(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    out = _index_reduce(self, *args, **kwargs)
    from .autograd import no_grad
    with no_grad():
        self[...] = out
    return self
