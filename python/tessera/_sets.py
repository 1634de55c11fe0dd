"""Set functions of the array API 2024.12: unique_all, unique_counts, unique_inverse,
unique_values, plus NumPy-compatible isin.

All unique_* flatten x and return the distinct values in ascending order (NaNs last), as
NumPy does; complex values follow NumPy's order too (lexicographic, NaN-bearing last). Per
the standard each NaN is distinct: NaNs are never merged, each gets its own entry with count
1. ``-0.0`` and ``0.0`` compare equal and merge. Built on the stable radix sort: `indices`
point at each value's first occurrence; `inverse_indices` has x's shape.
"""
from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any, Optional

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import bfloat16
from ._tensor import _dim_index
from ._torch_legacy import _expect_tensor

_TORCH_NAMES = ["unique", "unique_consecutive"]  # PyTorch's
__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "isin"] + _TORCH_NAMES

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def _run_starts(sv: Tensor) -> Tensor:
    """Bool flags marking the first element of each run of equal values in sorted `sv`
    (NaN != NaN, so every NaN starts its own run)."""
    from ._creation import ones
    flags = ones((sv.shape[0],), dtype=_C.bool, device=sv.device)
    if sv.shape[0] > 1:
        flags[1:] = sv[1:] != sv[:-1]
    return flags


def _sort_complex(flat: Tensor) -> tuple:
    """(sorted values, permutation) of a 1-d complex tensor in NumPy's order: NaN-free values
    lexicographically by (real, imag), then R + NaNj by R, NaN + Rj by R, NaN + NaNj last.
    Three stable sorts: by imag, by real, then by that NaN class."""
    from ._C import imag, isnan, real
    perm = _C._sort_with_indices(imag(flat), 0, False)[1]
    perm = perm[_C._sort_with_indices(real(flat)[perm], 0, False)[1]]
    v = flat[perm]
    nan_class = isnan(imag(v)).astype(_C.int8) + 2 * isnan(real(v)).astype(_C.int8)
    perm = perm[_C._sort_with_indices(nan_class, 0, False)[1]]
    return flat[perm], perm


def _unique(x: Tensor, want_index: builtins.bool, want_counts: builtins.bool) -> tuple:
    from ._statistical import cumulative_sum, diff
    flat = x.reshape(-1)
    n = flat.shape[0]
    if x.dtype in (_C.complex64, _C.complex128):
        sv, perm = _sort_complex(flat)
    elif want_index:
        sv, perm = _C._sort_with_indices(flat, 0, False)
    else:
        sv, perm = _C._sort(flat, 0, False), None
    flags = _run_starts(sv)
    starts = _C.argwhere(flags)[:, 0]
    values = sv[starts]
    counts = inverse = indices = None
    if want_counts:
        from ._manipulation import concat
        from ._creation import asarray
        counts = diff(concat([starts, asarray([n], dtype=_C.int64, device=starts.device)]))
    if want_index:
        indices = perm[starts]
        inv_sorted = cumulative_sum(flags, dtype=_C.int64) - 1
        inverse = _C._scatter_permutation(perm, inv_sorted).reshape(tuple(x.shape))
    return values, indices, inverse, counts


def _check(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a tensor, got {type(x).__name__}")
    return x


def unique_all(x: Tensor, /) -> UniqueAllResult:
    """``(values, indices, inverse_indices, counts)``: the sorted distinct values, the flat
    index of each one's first occurrence, for every element of x the position of its value in
    `values` (shape of x), and how often each value occurs. Index arrays are int64."""
    v, i, inv, c = _unique(_check(x, "unique_all"), True, True)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x: Tensor, /) -> UniqueCountsResult:
    """``(values, counts)``: the sorted distinct values and how often each occurs."""
    v, _, _, c = _unique(_check(x, "unique_counts"), False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Tensor, /) -> UniqueInverseResult:
    """``(values, inverse_indices)``: sorted distinct values and, for every element of x, the
    position of its value in `values` (``values[inverse_indices]`` rebuilds x)."""
    v, _, inv, _ = _unique(_check(x, "unique_inverse"), True, False)
    return UniqueInverseResult(v, inv)


def unique_values(x: Tensor, /) -> Tensor:
    """The sorted distinct values of x (1-d)."""
    return _unique(_check(x, "unique_values"), False, False)[0]


def isin(elements: Any, test_elements: Any, *, assume_unique: builtins.bool = False,
         invert: builtins.bool = False) -> Tensor:
    """Bool tensor of elements' shape: True where an element of `elements` occurs anywhere in
    `test_elements` (compared in the promoted dtype; NaN is never found). ``invert=True``
    negates the result; ``assume_unique`` (torch's hint) changes nothing.
    Sort + binary search: O((n + m) log m)."""
    x1, x2 = elements, test_elements
    from ._creation import asarray, zeros
    from ._dtypes import astype, result_type
    from ._elementwise import minimum
    a = x1 if isinstance(x1, Tensor) else asarray(x1)
    b = x2 if isinstance(x2, Tensor) else asarray(x2)
    dt = result_type(x1 if isinstance(x1, Tensor) else a, x2 if isinstance(x2, Tensor) else b)
    a, b = astype(a, dt, copy=False), astype(b, dt, copy=False).reshape(-1)
    if b.shape[0] == 0:
        found = zeros(tuple(a.shape), dtype=_C.bool, device=a.device)
    elif dt in (_C.complex64, _C.complex128):  # no order: compare against every element
        from ._statistical import any as any_
        found = any_(a[..., None] == b, axis=-1)
    else:
        sb = _C._sort(b, 0, False)
        pos = minimum(_C._searchsorted(sb, a, False, None), b.shape[0] - 1)
        found = sb[pos] == a
    return ~found if invert else found


# ---- PyTorch's unique and unique_consecutive

def _to_np(x: Tensor, op: str) -> np.ndarray:
    _expect_tensor(x, op)
    return np.asarray(x.detach().cpu().float() if x.dtype == bfloat16 else x.detach().cpu())


def _unique_result(input: Tensor, vals: np.ndarray, inv: np.ndarray, cnt: np.ndarray,
                   return_inverse: builtins.bool, return_counts: builtins.bool) -> Any:
    dev = input.device
    out = _ns().asarray(vals, dtype=input.dtype, device=dev)
    extra = []
    if return_inverse:
        extra.append(_ns().asarray(inv.astype(np.int64), device=dev))
    if return_counts:
        extra.append(_ns().asarray(cnt.astype(np.int64), device=dev))
    return (out, *extra) if extra else out


def unique(input: Tensor, sorted: builtins.bool = True, return_inverse: builtins.bool = False,
           return_counts: builtins.bool = False, dim: Optional[int] = None) -> Any:
    """torch.unique: the sorted distinct values (of the flattened input, or distinct slices
    along `dim`), plus the inverse indices and/or counts when asked."""
    a = _to_np(input, "unique")
    if dim is None:
        # equal_nan=False: every NaN is its own value, as torch keeps them
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        d = _dim_index("unique", dim, input.ndim)
        vals, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inv = inv.reshape(-1)
    return _unique_result(input, vals, inv, cnt, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: builtins.bool = False,
                       return_counts: builtins.bool = False, dim: Optional[int] = None) -> Any:
    """Collapses runs of equal consecutive values (of the flattened input, or slices along
    `dim`), plus inverse indices and/or run lengths when asked."""
    a = _to_np(input, "unique_consecutive")
    if dim is None:
        flat = a.reshape(-1)
        change = np.ones(flat.shape[0], dtype=bool)
        if flat.size:
            change[1:] = flat[1:] != flat[:-1]
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        d = _dim_index("unique_consecutive", dim, input.ndim)
        m = np.moveaxis(a, d, 0)
        change = np.ones(m.shape[0], dtype=bool)
        if m.shape[0]:
            per_slice = builtins.int(np.prod(m.shape[1:], dtype=np.int64))
            change[1:] = np.any((m[1:] != m[:-1]).reshape(m.shape[0] - 1, per_slice), axis=1)
        vals = np.moveaxis(m[change], 0, d)
        inv = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    n = change.shape[0]
    cnt = np.diff(np.append(starts, n))
    return _unique_result(input, vals, inv, cnt, return_inverse, return_counts)


def _ns() -> Any:
    import tessera
    return tessera
