"""Index-based selection and update: take (array API), nonzero / argwhere, and PyTorch's
index_fill / index_copy / index_put / scatter_reduce / masked_scatter / the *_scatter family,
with the matching Tensor methods. take_along_axis, nonzero / argwhere and PyTorch's gather /
scatter / scatter_add / index_select / index_add / masked_fill / masked_select / index_fill /
index_copy (and their methods and in-place forms) are C++ functions with their argument forms parsed in the binding
(csrc/python/bind_search.cpp); this module gathers them into the namespace.

``ts.nonzero(x)`` follows the standard (and NumPy): a tuple of ``x.ndim`` int64 index
tensors. The method ``x.nonzero()`` follows PyTorch: one ``(count, x.ndim)`` int64 tensor
(``x.nonzero(as_tuple=True)`` gives the standard's tuple). ``ts.argwhere(x)`` is NumPy's name
for the PyTorch form.

Indices may be negative (counted from the end) in every function here, as in NumPy; an
out-of-range index raises IndexError naming the axis, the index and the size.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence, Tuple, Union

from . import _C
from ._C import Tensor
from ._C import (  # noqa: F401  (the C++ functions: csrc/python/bind_search.cpp)
    argwhere, gather, index_add, index_copy, index_fill, index_select, masked_fill,
    masked_select, nonzero, scatter, scatter_add, take_along_axis,
)
from ._C import scatter_reduce  # noqa: F401  (csrc/python/bind_index_forms.cpp)
from ._tensor import _dim_index

__all__ = ["take", "take_along_axis", "nonzero", "argwhere", "gather", "scatter",
           "scatter_add", "index_select", "index_add", "masked_fill", "masked_select"]

def _tensor(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from ._creation import asarray
    return asarray(x)


def take(x: Tensor, indices: Any, /, *, axis: Optional[int] = None) -> Tensor:
    """Elements of `x` at `indices` along `axis` (a copy).

    Shapes: ``x.shape[:axis] + indices.shape + x.shape[axis+1:]``. With ``axis=None`` `x` is
    flattened first (NumPy; the standard allows None for 1-d x only)."""
    x = _tensor(x)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"take: axis must be an int or None, got {type(axis).__name__}")
    nd = max(x.ndim, 1)
    if not -nd <= axis < nd:
        raise IndexError(f"take: axis {axis} is out of bounds for a tensor of dimension {x.ndim}")
    axis %= nd
    return x[(slice(None),) * axis + (_tensor(indices),)]


def _take_method(self: Tensor, index: Any) -> Tensor:
    """torch.Tensor.take: elements of the flattened tensor at `index` (shape of index)."""
    return take(self, index)


# ---- PyTorch's indexing functions and methods: where, masked_scatter, index_fill,
# index_copy, index_put, scatter_reduce (out of place; the in-place twins are made from them)
_TORCH_NAMES = ["masked_scatter", "index_fill", "index_copy", "index_put",
                "select_scatter", "slice_scatter", "diagonal_scatter", "put",
                "nonzero_static"]  # PyTorch's (the standard's are above)
__all__ += _TORCH_NAMES + ["scatter_reduce"]

_INT = (_C.int8, _C.int16, _C.int32, _C.int64, _C.uint8)


def _ts() -> Any:
    import tessera
    return tessera


def _index_vec(op: str, index: Any) -> Tensor:
    if not isinstance(index, Tensor):
        index = _ts().asarray(index)
    if index.dtype not in _INT:
        raise RuntimeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    if index.ndim > 1:
        raise IndexError(f"{op}: index must be a vector (at most 1-D), got {index.ndim}-D")
    return _C._reshape(index, (-1,), -1)


def _check_bounds(op: str, index: Tensor, n: int) -> Tensor:
    if index.size and (builtins.bool(_ts().any(index >= n)) or builtins.bool(_ts().any(index < -n))):
        raise IndexError(f"{op}: index out of range for dimension of size {n}")
    return _C.where(index < 0, index + n, index)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input with the positions where `mask` (broadcast to input) is True filled, in order,
    by the first elements of `source`."""
    if mask.dtype != _C.bool:
        raise RuntimeError(f"masked_scatter: expected mask to have dtype bool, got {mask.dtype}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected source ({source.dtype}) to have the same "
                           f"dtype as self ({input.dtype})")
    m = _C._broadcast_to(mask, tuple(input.shape))
    count = int(_ts().sum(m).item())
    src = _C._reshape(source, (-1,), -1)
    if count > src.shape[0]:
        raise RuntimeError(f"masked_scatter: number of elements in source ({src.shape[0]}) < "
                           f"number of ones in mask ({count})")
    if src.shape[0] == 0:
        return input.clone()
    pos = _ts().cumulative_sum(_C._reshape(_C._astype(m, _C.int64, True), (-1,), -1)) - 1
    pos = _C.clamp(pos, 0, src.shape[0] - 1)
    picked = _C._reshape(_ts().take(src, pos, axis=0), tuple(input.shape), -1)
    return _C.where(m, picked, input)


def index_put(input: Tensor, indices: Sequence[Any], values: Any,
              accumulate: builtins.bool = False) -> Tensor:
    """input with input[indices] = values (accumulate=True adds instead, summing repeated
    indices)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    key = tuple(indices)
    v = values if isinstance(values, Tensor) else _ts().asarray(values, dtype=input.dtype)
    if v.dtype != input.dtype:
        raise RuntimeError(f"index_put: values ({v.dtype}) must have the same dtype as self "
                           f"({input.dtype})")
    if not accumulate:
        out = input.clone()
        out[key] = v
        return out
    lin = _ts().arange(input.size, device=input.device)
    pos = _C._reshape(lin, tuple(input.shape), -1)[key]
    vb = _C._broadcast_to(v, tuple(pos.shape))
    flat = _ts().index_add(_C._reshape(input, (-1,), -1), 0, _C._reshape(pos, (-1,), -1),
                           _C._reshape(vb, (-1,), -1))
    return _C._reshape(flat, tuple(input.shape), -1)


METHODS = {"masked_scatter": masked_scatter, "index_put": index_put}


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


# ---- select/slice/diagonal_scatter, put, nonzero_static
def _scatter_into(input: Tensor, key: Any, src: Tensor, op: str, expect: tuple) -> Tensor:
    if tuple(src.shape) != expect:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self, src "
                           f"size = {tuple(src.shape)}, slice size = {expect}")
    out = input.clone()
    out[key] = _C._astype(src, input.dtype, False)
    return out


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """input with input.select(dim, index) replaced by src."""
    d = _dim_index("select_scatter", dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} out of range for dimension {dim} of size {n}")
    key = (slice(None),) * d + (index,)
    return _scatter_into(input, key, src, "select_scatter", tuple(input[key].shape))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: Optional[int] = None,
                  end: Optional[int] = None, step: int = 1) -> Tensor:
    """input with input[..., start:end:step, ...] (at dim) replaced by src."""
    d = _dim_index("slice_scatter", dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, key, src, "slice_scatter", tuple(input[key].shape))


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """input with its diagonal (offset, dim1, dim2) replaced by src."""
    from ._manipulation import diagonal
    out = input.clone()
    view = diagonal(out, offset, dim1, dim2)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"diagonal_scatter: expected src to have a size equal to the diagonal "
                           f"of self, src size = {tuple(src.shape)}, diagonal size = "
                           f"{tuple(view.shape)}")
    view[...] = _C._astype(src, input.dtype, False)
    return out


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: builtins.bool = False) -> Tensor:
    """input (seen flattened) with input.flatten()[index] = source (or += with accumulate)."""
    if index.size != source.size:
        raise RuntimeError(f"put: expected source and index to have the same number of elements, "
                           f"but got {source.size} and {index.size}")
    if input.size == 0 and index.size:
        raise IndexError("put: cannot put into an empty tensor")
    n = input.size
    flat_idx = _C._reshape(index, (-1,), -1)
    if flat_idx.size and (builtins.bool(_ts().any(flat_idx >= n)) or builtins.bool(_ts().any(flat_idx < -n))):
        raise IndexError(f"put: index out of range for a tensor of {n} elements")
    flat = index_put(_C._reshape(input, (-1,), -1), (flat_idx,), _C._reshape(source, (-1,), -1),
                     accumulate)
    return _C._reshape(flat, tuple(input.shape), -1)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero() as (size, ndim) int64, truncated or padded with fill_value rows
    (torch.nonzero_static and x.nonzero_static)."""
    nz = _ts().argwhere(input)
    k = nz.shape[0]
    if k >= size:
        return nz[:size]
    pad = _ts().full((size - k, input.ndim), fill_value, dtype=_C.int64, device=input.device)
    return _ts().concat([nz, pad], axis=0)


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
