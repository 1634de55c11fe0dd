"""Creation functions of the array API (asarray, zeros, ones, empty, full, arange, ...)."""
from __future__ import annotations

import builtins
import math
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import _as_dtype, float32, float64, complex64, complex128, int64, bool as bool_

ShapeLike = Union[int, Sequence[int]]


def _shape(shape: Any) -> tuple:
    if isinstance(shape, (builtins.int, np.integer)):
        return (builtins.int(shape),)
    return tuple(builtins.int(s) for s in shape)


def _dt(dtype: Any, default: Any) -> Any:
    return default if dtype is None else _as_dtype(dtype)


def _scalar_default_dtype(obj: Any):
    if isinstance(obj, builtins.bool):
        return bool_
    if isinstance(obj, builtins.int):
        return int64
    if isinstance(obj, builtins.float):
        return float32
    if isinstance(obj, builtins.complex):
        return complex64
    return None


def _nested_kind(obj: Any) -> Optional[type]:
    """The widest Python scalar type in a nested list/tuple (None if it holds other things)."""
    order = {builtins.bool: 0, builtins.int: 1, builtins.float: 2, builtins.complex: 3}
    best = -1
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(o)
        elif type(o) in order:
            best = builtins.max(best, order[type(o)])
        else:
            return None
    return [builtins.bool, builtins.int, builtins.float, builtins.complex][best] if best >= 0 else builtins.float


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: Optional[builtins.bool] = None,
            requires_grad: builtins.bool = False) -> Tensor:
    """Converts `obj` to a tensor.

    `obj` may be a tensor, a Python scalar, a nested sequence, a NumPy array, any object with
    the buffer protocol, or a DLPack producer. copy=None copies only when needed, copy=False
    never copies (ValueError when it would have to), copy=True always copies.
    Python floats become float32 and ints int64 (the default dtypes).
    """
    target = None if dtype is None else _as_dtype(dtype)
    if isinstance(obj, Tensor):
        out = obj
        if target is not None and target != obj.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False but converting {obj.dtype} to {target} needs a copy")
            return _C._astype(obj, target, True)
        return _C._clone(out) if copy else out
    default = _scalar_default_dtype(obj)
    if default is not None:
        if copy is False:
            raise ValueError("asarray: copy=False is impossible for a Python scalar")
        return _C._scalar_tensor(obj, target or default)
    if isinstance(obj, (list, tuple)):
        if copy is False:
            raise ValueError("asarray: copy=False is impossible for a Python sequence")
        kind = _nested_kind(obj)
        if kind is None:  # sequences of tensors / NumPy scalars
            arr = np.asarray([x.numpy() if isinstance(x, Tensor) else x for x in obj]
                             if any(isinstance(x, Tensor) for x in obj) else obj)
            return asarray(arr, dtype=target, copy=True)
        try:
            arr = np.asarray(obj, dtype={builtins.bool: np.bool_, builtins.int: np.int64,
                                         builtins.float: np.float64, builtins.complex: np.complex128}[kind])
        except OverflowError as e:
            raise OverflowError(f"asarray: a Python int does not fit in int64: {e}") from None
        except ValueError as e:
            raise ValueError(f"asarray: nested sequence is ragged or malformed: {e}") from None
        t = _C._from_numpy(arr, -1)
        if target is None:
            target = {builtins.float: float32, builtins.complex: complex64}.get(kind)
        return _C._astype(t, target, False) if target is not None else t
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        from ._interop import from_dlpack
        t = from_dlpack(obj, copy=copy)
        if target is not None and target != t.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False but converting {t.dtype} to {target} needs a copy")
            t = _C._astype(t, target, True)
        return t
    if not isinstance(obj, np.ndarray):
        try:
            obj = np.asarray(memoryview(obj)) if _has_buffer(obj) else np.asarray(obj)
        except Exception as e:  # noqa: BLE001
            raise TypeError(f"asarray: cannot convert an object of type {type(obj).__name__} to a tensor") from e
        if obj.dtype == object:
            raise TypeError("asarray: cannot convert an object array to a tensor")
    if target is not None and np.dtype(_C._numpy_dtype(target)) != obj.dtype:
        if copy is False:
            raise ValueError(f"asarray: copy=False but converting {obj.dtype} to {target} needs a copy")
        return _C._astype(_C._from_numpy(obj, -1), target, True)
    return _C._from_numpy(obj, {None: -1, False: 0, True: 1}[copy])


def _has_buffer(obj: Any) -> builtins.bool:
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def empty(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> Tensor:
    """An uninitialized tensor of `shape`."""
    return _C._empty(_shape(shape), _dt(dtype, float32), device)


def zeros(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of `shape` filled with 0."""
    return _C._full(_shape(shape), 0, _dt(dtype, float32), device)


def ones(shape: ShapeLike, *, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of `shape` filled with 1."""
    return _C._full(_shape(shape), 1, _dt(dtype, float32), device)


def full(shape: ShapeLike, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor of `shape` filled with `fill_value` (dtype inferred from it when not given)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _scalar_default_dtype(fill_value)
        if dtype is None:
            raise TypeError(f"full: fill_value must be a Python number, got {type(fill_value).__name__}")
    return _C._full(_shape(shape), fill_value, _as_dtype(dtype), device)


def _like(x: Tensor, dtype: Any, device: Any):
    return (x.dtype if dtype is None else _as_dtype(dtype)), (x.device if device is None else device)


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _C._empty(x.shape, d, dev)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _C._full(x.shape, 0, d, dev)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _C._full(x.shape, 1, d, dev)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    d, dev = _like(x, dtype, device)
    return _C._full(x.shape, fill_value, d, dev)
