"""Index-based selection and update: take / take_along_axis (array API), the PyTorch family
gather / scatter / scatter_add / index_select / index_add / masked_fill / masked_select, and
nonzero / argwhere, with the matching Tensor methods.

``ts.nonzero(x)`` follows the standard (and NumPy): a tuple of ``x.ndim`` int64 index
tensors. The method ``x.nonzero()`` follows PyTorch: one ``(count, x.ndim)`` int64 tensor
(``x.nonzero(as_tuple=True)`` gives the standard's tuple). ``ts.argwhere(x)`` is NumPy's name
for the PyTorch form.

Indices may be negative (counted from the end) in every function here, as in NumPy; an
out-of-range index raises IndexError naming the axis, the index and the size.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _C
from ._C import Tensor

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


def take_along_axis(x: Tensor, indices: Any, /, *, axis: int = -1) -> Tensor:
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along `axis` (NumPy's
    take_along_axis): `x` and `indices` have the same rank and broadcast against each other
    in every other axis. Pairs with argsort: ``take_along_axis(x, argsort(x, axis=a), axis=a)``.
    """
    return _C._take_along_axis(_tensor(x), _tensor(indices), axis)


def nonzero(x: Tensor, /) -> Tuple[Tensor, ...]:
    """Indices of the nonzero (truthy) elements: a tuple of ``x.ndim`` int64 tensors of equal
    length, in row-major order (array API / NumPy). 0-d input raises ValueError, as in NumPy 2;
    use ``argwhere`` or ``x.nonzero()`` for the ``(count, ndim)`` form."""
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("nonzero: 0-d tensors are not supported; use x[None] or argwhere(x)")
    coords = _C._nonzero(x)
    return tuple(coords[:, j] for j in range(x.ndim))


def argwhere(x: Tensor, /) -> Tensor:
    """Coordinates of the nonzero elements as one ``(count, x.ndim)`` int64 tensor (NumPy's
    argwhere, torch's ``x.nonzero()``)."""
    return _C._nonzero(_tensor(x))


def _nonzero_method(self: Tensor, *, as_tuple: bool = False) -> Any:
    """torch.Tensor.nonzero: a ``(count, ndim)`` int64 tensor, or with ``as_tuple=True`` a
    tuple of 1-d index tensors (for 0-d input, one tensor, as PyTorch does)."""
    if not as_tuple:
        return _C._nonzero(self)
    if self.ndim == 0:
        return (_C._nonzero(self.reshape(1))[:, 0],)
    return nonzero(self)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.gather: ``out[i][j][k] = input[index[i][j][k]][j][k]`` for dim=0 (and so on).

    `index` is an integer tensor of input's rank, no larger than input in any dim but `dim`;
    the result has index's shape and input's dtype."""
    return _C._gather(_tensor(input), dim, _tensor(index))


def _src(src: Any, value: Any, op: str) -> Any:
    if src is None and value is None:
        raise TypeError(f"{op}: pass src (a tensor) or value (a number)")
    if src is not None and value is not None:
        raise TypeError(f"{op}: pass only one of src and value")
    return src if src is not None else value


def _reduce(reduce: Optional[str], op: str) -> bool:
    """True for reduce='add', False for None; 'multiply' is handled by _scatter_multiply."""
    if reduce is None:
        return False
    if reduce == "add":
        return True
    raise ValueError(f"{op}: reduce must be None, 'add' or 'multiply', got {reduce!r}")


def _scatter_multiply(input: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """torch's scatter(..., reduce='multiply'): ``out[index[i][j]][j] *= src[i][j]`` for
    dim=0 (src a tensor or a number, cast to input's dtype)."""
    from ._torch_compat_indexing import scatter_reduce
    index = _tensor(index)
    if not isinstance(src, Tensor):
        from ._creation import full
        src = full(tuple(index.shape), src, dtype=input.dtype, device=input.device)
    return scatter_reduce(input, dim, index, src, "prod", include_self=True)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: Optional[str] = None) -> Tensor:
    """torch.scatter (out of place): a copy of input with ``out[index[i][j]][j] = src[i][j]``
    for dim=0. `src` is a tensor (at least index's size in every dim) or a number. With
    repeated indices the last write wins. ``reduce='add'`` accumulates instead,
    ``reduce='multiply'`` multiplies."""
    if reduce == "multiply":
        return _scatter_multiply(_tensor(input), dim, index, _src(src, value, "scatter"))
    return _C._scatter(_tensor(input), dim, _tensor(index), _src(src, value, "scatter"),
                       _reduce(reduce, "scatter"), False)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """torch.scatter_add (out of place): ``out[index[i][j]][j] += src[i][j]`` for dim=0;
    repeated indices accumulate."""
    return _C._scatter(_tensor(input), dim, _tensor(index), src, True, False)


def _scatter_(self: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
              reduce: Optional[str] = None) -> Tensor:
    """In-place scatter (torch.Tensor.scatter_); returns self (reduce: None, 'add' or
    'multiply')."""
    if reduce == "multiply":
        self[...] = _scatter_multiply(self, dim, index, _src(src, value, "scatter_"))
        return self
    _C._scatter(self, dim, _tensor(index), _src(src, value, "scatter_"),
                _reduce(reduce, "scatter_"), True)
    return self


def _scatter_add_(self: Tensor, dim: int, index: Tensor, src: Any) -> Tensor:
    """In-place scatter_add (torch.Tensor.scatter_add_); returns self."""
    _C._scatter(self, dim, _tensor(index), src, True, True)
    return self


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """torch.index_select: the slices of input at the 1-d integer `index` along `dim`
    (a copy; ``input.shape`` with ``dim`` replaced by ``len(index)``)."""
    return _C._index_select(_tensor(input), dim, _tensor(index))


def index_add(input: Tensor, dim: int, index: Tensor, source: Any, *, alpha: Any = 1) -> Tensor:
    """torch.index_add (out of place): ``out.select(dim, index[i]) += alpha * source.select(dim, i)``;
    repeated indices accumulate. source has input's shape with `dim` of len(index)."""
    source = _tensor(source)
    if alpha != 1:
        source = source * alpha
    return _C._index_add(_tensor(input), dim, _tensor(index), source)


def _index_add_(self: Tensor, dim: int, index: Tensor, source: Any, *, alpha: Any = 1) -> Tensor:
    """In-place index_add (torch.Tensor.index_add_); returns self."""
    self[...] = index_add(self, dim, index, source, alpha=alpha)
    return self


def _mask(mask: Any, op: str) -> Tensor:
    mask = _tensor(mask)
    if mask.dtype != _C.bool:
        raise TypeError(f"{op}: mask must be a bool tensor, got {mask.dtype}")
    return mask


def masked_fill(input: Tensor, mask: Any, value: Any) -> Tensor:
    """torch.masked_fill (out of place): input with `value` (a number or 0-d tensor, cast to
    input's dtype) where the bool `mask` (broadcastable to input) is True."""
    from ._statistical import where
    input = _tensor(input)
    mask = _mask(mask, "masked_fill")
    _check_broadcasts_into(mask, input, "masked_fill")
    return where(mask, _cast_to(value, input, "masked_fill"), input)


def _masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    """In-place masked_fill (torch.Tensor.masked_fill_); returns self."""
    mask = _mask(mask, "masked_fill_")
    _check_broadcasts_into(mask, self, "masked_fill_")
    from ._manipulation import broadcast_to
    self[broadcast_to(mask, tuple(self.shape))] = _cast_to(value, self, "masked_fill_")
    return self


def masked_select(input: Tensor, mask: Any) -> Tensor:
    """torch.masked_select: the 1-d tensor of input's elements where `mask` is True, with
    input and mask broadcast together (row-major order)."""
    from ._manipulation import broadcast_arrays
    input = _tensor(input)
    mask = _mask(mask, "masked_select")
    x, m = broadcast_arrays(input, mask)
    return x[m] if x.ndim else x[None][m[None]]


def _check_broadcasts_into(mask: Tensor, x: Tensor, op: str) -> None:
    ok = mask.ndim <= x.ndim and all(
        m in (1, s) for m, s in zip(reversed(tuple(mask.shape)), reversed(tuple(x.shape))))
    if not ok:
        raise ValueError(f"{op}: mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"input's shape {tuple(x.shape)}")


def _cast_to(value: Any, x: Tensor, op: str) -> Tensor:
    from ._dtypes import astype
    from ._creation import asarray
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"{op}: value must be a number or a 0-d tensor, got shape "
                             f"{tuple(value.shape)}")
        return astype(value, x.dtype)
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"{op}: value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    return astype(asarray(value), x.dtype)


def _gather_method(self: Tensor, dim: int, index: Tensor) -> Tensor:
    return gather(self, dim, index)


_gather_method.__doc__ = gather.__doc__
