"""Statistical, searching and utility functions of the array API 2024.12 (sum, prod, mean,
var, std, max, min, cumulative_sum, cumulative_prod, all, any, diff, argmax, argmin,
count_nonzero, where) and the matching Tensor methods.

Conventions shared by the reductions:

* ``axis`` is None (all axes), an int or a tuple of ints; negative axes count from the end.
  PyTorch's ``dim=`` is accepted as an alias of ``axis=`` and ``keepdim=`` of ``keepdims=``.
  An out-of-range axis raises IndexError, a repeated axis ValueError.
* Result shape: ``x.shape`` without the reduced axes, or with them as size 1 when
  ``keepdims=True``. Reducing a 0-d tensor over ``axis=None`` gives a 0-d tensor.
* Float reductions are pairwise over fixed blocks: float32 sums stay accurate over millions
  of elements, and results are bit-identical for any thread count. float16/bfloat16
  accumulate in float32.
* Unlike ``torch.max(x, dim)``, ``max``/``min`` (and the methods) return values only, as the
  standard specifies; use ``argmax``/``argmin`` for the indices.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Tuple, Union

from . import _C
from .amp import _policy as _amp
from .amp._policy import FP32 as _FP32, FP32_CPU as _FP32_CPU, FP32_CUDA as _FP32_CUDA, cast as _cast
from ._C import Tensor, where

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "count_nonzero",
           "argmax", "argmin", "cumulative_sum", "cumulative_prod", "diff", "where"]

Axis = Optional[Union[int, Tuple[int, ...]]]
_UNSET: Any = object()


def _axis(name: str, axis: Any, dim: Any) -> Any:
    if dim is _UNSET:
        return axis
    if axis is not None:
        raise TypeError(f"{name}: got both axis= and its alias dim=; pass one")
    return dim


def _keep(name: str, keepdims: builtins.bool, keepdim: Any) -> builtins.bool:
    if keepdim is _UNSET:
        return keepdims
    if keepdims:
        raise TypeError(f"{name}: got both keepdims= and its alias keepdim=; pass one")
    return builtins.bool(keepdim)


def sum(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False,
        dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Sum over `axis`. Default result dtype: bool and signed ints -> int64, unsigned ints ->
    uint64, floats and complex keep theirs; ``dtype=`` casts the input first and accumulates
    in it. The sum over no elements is 0."""
    x = _cast(_FP32_CUDA, x) if dtype is None else x
    return _C._sum(x, _axis("sum", axis, dim), _keep("sum", keepdims, keepdim), dtype)


def prod(x: Tensor, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False,
         dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Product over `axis`; dtype rules as for `sum`. The product over no elements is 1."""
    x = _cast(_FP32 if dtype is None else _FP32_CPU, x)
    return _C._prod(x, _axis("prod", axis, dim), _keep("prod", keepdims, keepdim), dtype)


def mean(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
         dim: Any = _UNSET, keepdim: Any = _UNSET, dtype: Any = None) -> Tensor:
    """Arithmetic mean over `axis`. Floating and complex inputs keep their dtype (float16 /
    bfloat16 accumulate in float32); integer and bool inputs are averaged in the default float
    dtype, float32 (NumPy would give float64; the standard leaves integers unspecified).
    The mean over no elements is NaN. ``dtype=`` (PyTorch's keyword) casts the input to that
    floating or complex dtype first and averages in it; an integer or bool dtype raises
    RuntimeError like torch."""
    if dtype is not None:
        from ._dtypes import _as_dtype
        dt = _as_dtype(dtype)
        if dt not in (_C.float16, _C.bfloat16, _C.float32, _C.float64, _C.complex64, _C.complex128):
            raise RuntimeError(f"mean(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {dt}")
        if x.dtype != dt:
            x = _C._astype(x, dt, True)
    return _C._mean(x, _axis("mean", axis, dim), _keep("mean", keepdims, keepdim))


def var(x: Tensor, /, *, axis: Axis = None, correction: Union[int, float] = 0.0,
        keepdims: builtins.bool = False, dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Variance: sum((x - mean)**2) / max(N - correction, 0) over `axis` (correction=1 gives
    the unbiased estimate; NumPy calls it ddof). Real floating input keeps its dtype; integers
    and bool compute in float32; complex input raises TypeError. N - correction <= 0 gives
    inf or NaN like NumPy."""
    return _C._var(x, _axis("var", axis, dim), float(correction), _keep("var", keepdims, keepdim))


def std(x: Tensor, /, *, axis: Axis = None, correction: Union[int, float] = 0.0,
        keepdims: builtins.bool = False, dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Standard deviation: sqrt(var(x, axis=axis, correction=correction))."""
    return _C._std(x, _axis("std", axis, dim), float(correction), _keep("std", keepdims, keepdim))


def max(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
        dim: Any = _UNSET, keepdim: Any = _UNSET, other: Any = _UNSET) -> Tensor:
    """Maximum over `axis` (values only, unlike torch.max(x, dim)). NaN propagates. Reducing
    a zero-size axis into a non-empty result raises ValueError (no identity)."""
    if other is not _UNSET:  # torch's max(input, other=): the elementwise maximum
        return _C.maximum(x, other)
    return _C._max(x, _axis("max", axis, dim), _keep("max", keepdims, keepdim))


def min(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
        dim: Any = _UNSET, keepdim: Any = _UNSET, other: Any = _UNSET) -> Tensor:
    """Minimum over `axis` (values only). NaN propagates; empty reductions raise ValueError."""
    if other is not _UNSET:  # torch's min(input, other=): the elementwise minimum
        return _C.minimum(x, other)
    return _C._min(x, _axis("min", axis, dim), _keep("min", keepdims, keepdim))


def all(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
        dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """True where every element along `axis` is nonzero (True over no elements); bool result."""
    return _C._all(x, _axis("all", axis, dim), _keep("all", keepdims, keepdim))


def any(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
        dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """True where some element along `axis` is nonzero (False over no elements); bool result."""
    return _C._any(x, _axis("any", axis, dim), _keep("any", keepdims, keepdim))


def count_nonzero(x: Tensor, /, *, axis: Axis = None, keepdims: builtins.bool = False,
                  dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Number of nonzero elements along `axis`, as int64."""
    return _C._count_nonzero(x, _axis("count_nonzero", axis, dim),
                             _keep("count_nonzero", keepdims, keepdim))


def argmax(x: Tensor, /, *, axis: Optional[int] = None, keepdims: builtins.bool = False,
           dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Index (int64) of the first maximum along `axis`; over the flattened tensor when axis is
    None. The first NaN counts as the maximum (NumPy). Empty axes raise ValueError."""
    return _C._argmax(x, _axis("argmax", axis, dim), _keep("argmax", keepdims, keepdim))


def argmin(x: Tensor, /, *, axis: Optional[int] = None, keepdims: builtins.bool = False,
           dim: Any = _UNSET, keepdim: Any = _UNSET) -> Tensor:
    """Index (int64) of the first minimum along `axis` (the first NaN wins)."""
    return _C._argmin(x, _axis("argmin", axis, dim), _keep("argmin", keepdims, keepdim))


def cumulative_sum(x: Tensor, /, *, axis: Optional[int] = None, dtype: Any = None,
                   include_initial: builtins.bool = False, dim: Any = _UNSET) -> Tensor:
    """Running sums along `axis` (required unless x is 1-D). With include_initial=True the
    result starts with the identity 0 and is one longer along `axis`. Dtype rules as `sum`."""
    x = _cast(_FP32_CUDA, x) if dtype is None else x
    return _C._cumulative_sum(x, _axis("cumulative_sum", axis, dim), dtype, include_initial)


def cumulative_prod(x: Tensor, /, *, axis: Optional[int] = None, dtype: Any = None,
                    include_initial: builtins.bool = False, dim: Any = _UNSET) -> Tensor:
    """Running products along `axis` (identity 1 first with include_initial=True)."""
    x = _cast(_FP32_CUDA, x) if dtype is None else x
    return _C._cumulative_prod(x, _axis("cumulative_prod", axis, dim), dtype, include_initial)


def diff(x: Tensor, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Tensor:
    """n-th forward difference x[i+1] - x[i] along `axis`, after joining `prepend` and
    `append` (tensors matching x outside `axis`, or scalars) to x along it. The result is
    n shorter along `axis`; booleans give x[i+1] != x[i] (NumPy). Python numbers as
    prepend/append are weak (they take x's dtype kind), unlike NumPy's int64/float64.
    n=0 returns x unchanged (prepend/append ignored, like NumPy)."""
    return _C._diff(x, axis, n, prepend, append)


# ---- Tensor methods (torch-style positional dim; values only for max/min)
def _method(fn: Any, name: str) -> Any:
    def method(self: Tensor, axis: Axis = None, *args: Any, keepdims: builtins.bool = False,
               dim: Any = _UNSET, keepdim: Any = _UNSET, **kw: Any) -> Tensor:
        if args:  # torch's x.sum(dim, keepdim)
            if len(args) > 1 or name == "count_nonzero":
                raise TypeError(f"{name}() takes from 1 to {2 if name == 'count_nonzero' else 3} "
                                f"positional arguments but {len(args) + 2} were given")
            if keepdim is not _UNSET:
                raise TypeError(f"{name}(): got keepdim both positionally and as a keyword")
            keepdim = args[0]
        return fn(self, axis=axis, keepdims=keepdims, dim=dim, keepdim=keepdim, **kw)
    method.__name__ = name
    method.__doc__ = f"Same as tessera.{fn.__name__}(self, ...); `axis` may be passed positionally."
    return method


def _cumsum(self: Tensor, dim: Optional[int] = None, *, dtype: Any = None,
            axis: Optional[int] = None) -> Tensor:
    """torch-style x.cumsum(dim): cumulative_sum along dim (no initial element)."""
    return cumulative_sum(self, axis=dim if dim is not None else axis, dtype=dtype)


def _cumprod(self: Tensor, dim: Optional[int] = None, *, dtype: Any = None,
             axis: Optional[int] = None) -> Tensor:
    """torch-style x.cumprod(dim)."""
    return cumulative_prod(self, axis=dim if dim is not None else axis, dtype=dtype)


_amp.transparent(_method(sum, "sum"), _cumsum, _cumprod)  # x.sum() autocasts like ts.sum(x)
