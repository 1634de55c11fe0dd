"""Creation functions of the array API (asarray, zeros, ones, empty, full, arange, ...)."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import (_as_dtype, float32, float64, complex64, complex128, int64, uint64,
                      bool as bool_)

__all__ = ["asarray", "tensor", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
           "ones_like", "full_like", "arange", "linspace", "eye", "tril", "triu", "meshgrid",
           "set_default_device", "get_default_device"]

ShapeLike = Union[int, Sequence[int]]


def _shape(shape: Any) -> tuple:
    if hasattr(shape, "__index__") and not isinstance(shape, Tensor):
        return (operator.index(shape),)
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"shape must be an int or a sequence of ints, got {type(shape).__name__}")
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None


def _dt(dtype: Any, default: Any) -> Any:
    return default if dtype is None else _as_dtype(dtype)


_INT64_MAX, _UINT64_MAX = 2**63 - 1, 2**64 - 1


def _scalar_default_dtype(obj: Any):
    if isinstance(obj, np.generic):  # np.float64 subclasses float but keeps its own dtype
        return None
    if isinstance(obj, builtins.bool):
        return bool_
    if isinstance(obj, builtins.int):
        # Like NumPy: an int past int64's range but within uint64's becomes uint64 (not -1).
        return uint64 if _INT64_MAX < obj <= _UINT64_MAX else int64
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
    Python floats become float32 and ints int64 (the default dtypes); NumPy scalars keep their
    dtype. `device` places the result (RuntimeError for a device this build cannot use).
    """
    if device is None:  # torch.asarray is a default-device constructor for every input kind
        device = _default_device_or_none()
    if copy is not None and not isinstance(copy, (builtins.bool, np.bool_)):
        raise TypeError(f"asarray: copy must be True, False or None, got {type(copy).__name__} "
                        f"({copy!r})")
    out = _asarray_host(obj, dtype=dtype, copy=copy)
    if device is not None and _C.Device(device) != out.device:
        if copy is False:
            raise ValueError(f"asarray: copy=False but moving to {device} needs a copy")
        out = out.to_device(device)
    return _rg(out, requires_grad)


def set_default_device(device: Any) -> None:
    """Where creation functions (zeros, ones, arange, asarray of Python sequences, ...) put
    tensors when called without ``device=`` (PyTorch's torch.set_default_device; None resets
    to the CPU). Objects that already live somewhere (NumPy arrays, tensors) stay there."""
    _C._set_default_device("cpu" if device is None else device)


def get_default_device() -> Any:
    """The device creation functions use when called without ``device=``."""
    return _C._get_default_device()


def _default_device_or_none() -> Any:
    d = _C._get_default_device()
    return None if d.type == "cpu" else d


def _rg(t: Tensor, requires_grad: builtins.bool) -> Tensor:
    """Marks a freshly created tensor as a leaf that requires grad (PyTorch's keyword)."""
    if requires_grad:
        t.requires_grad_(True)
    return t


def _asarray_host(obj: Any, *, dtype: Any, copy: Optional[builtins.bool]) -> Tensor:
    """asarray without the device step (the object stays where it is)."""
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
            has_tensor = any(isinstance(x, Tensor) for x in obj)
            arr = np.asarray([_host_numpy(x) if isinstance(x, Tensor) else x for x in obj]
                             if has_tensor else obj)
            if target is None and has_tensor:
                target = _sequence_dtype(obj)
            return asarray(arr, dtype=target, copy=True)
        try:
            arr = np.asarray(obj, dtype={builtins.bool: np.bool_, builtins.int: np.int64,
                                         builtins.float: np.float64, builtins.complex: np.complex128}[kind])
        except OverflowError as e:
            arr = _uint64_or_raise(obj, e)
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
    if isinstance(obj, np.generic):  # a fresh writable 0-d array, not a read-only scalar view
        obj = np.array(obj)
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


def _host_numpy(t: Tensor) -> np.ndarray:
    """t as a NumPy array (bfloat16, which NumPy lacks, as float32)."""
    from ._dtypes import bfloat16
    return (_C._astype(t, float32, True) if t.dtype == bfloat16 else t).numpy()


def _sequence_dtype(obj: Any) -> Any:
    """PyTorch's dtype for a sequence mixing tensors and Python numbers: each element's dtype
    (a tensor's own, bool, int64, the default float dtype for a float, complex64 for a
    complex), promoted across kinds like torch.promote_types (int + float32 -> float32).
    None when some element is neither."""
    from . import _dtypes as d
    kinds = (d.bool,), (d.int8, d.int16, d.int32, d.int64, d.uint8, d.uint16, d.uint32, d.uint64), \
        (d.float16, d.bfloat16, d.float32, d.float64), (d.complex64, d.complex128)
    found: list = []
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, Tensor):
            found.append(o.dtype)
        elif isinstance(o, (builtins.bool, np.bool_)):
            found.append(d.bool)
        elif isinstance(o, builtins.int) and not isinstance(o, np.generic):
            found.append(int64)
        elif isinstance(o, builtins.float) and not isinstance(o, np.generic):
            found.append(None)  # the default float dtype, resolved below
        elif isinstance(o, builtins.complex) and not isinstance(o, np.generic):
            found.append("complex")
        else:
            return None
    if not found:
        return None
    from ._torch_compat_default_dtype import get_default_dtype
    fdef = get_default_dtype()
    found = [fdef if f is None else (complex128 if fdef == float64 else complex64) if f == "complex"
             else f for f in found]

    def kind(t: Any) -> int:
        return next(i for i, ks in enumerate(kinds) if t in ks)
    out = found[0]
    for t in found[1:]:
        if kind(t) == kind(out):
            out = _result_type(out, t)
        elif kind(t) > kind(out):
            low, out = out, t
            if kind(out) == 3 and low == float64:
                out = complex128
        elif kind(out) == 3 and t == float64:
            out = complex128
    return out


def _result_type(a: Any, b: Any) -> Any:
    from ._dtypes import result_type
    return result_type(a, b)


def _uint64_or_raise(obj: Any, err: OverflowError) -> np.ndarray:
    """Nested ints past int64: uint64 when they all fit there (NumPy's choice), else
    OverflowError."""
    try:
        return np.asarray(obj, dtype=np.uint64)
    except OverflowError:
        raise OverflowError(f"asarray: a Python int does not fit in int64 or uint64: {err}") from None


def _has_buffer(obj: Any) -> builtins.bool:
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def empty(shape: ShapeLike, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """An uninitialized tensor of `shape`."""
    return _rg(_C._empty(_shape(shape), _dt(dtype, float32), device), requires_grad)


def zeros(shape: ShapeLike, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """A tensor of `shape` filled with 0."""
    return _rg(_C._full(_shape(shape), 0, _dt(dtype, float32), device), requires_grad)


def ones(shape: ShapeLike, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """A tensor of `shape` filled with 1."""
    return _rg(_C._full(_shape(shape), 1, _dt(dtype, float32), device), requires_grad)


def full(shape: ShapeLike, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """A tensor of `shape` filled with `fill_value` (dtype inferred from it when not given)."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _scalar_default_dtype(fill_value)
        if dtype is None:
            raise TypeError(f"full: fill_value must be a Python number, got {type(fill_value).__name__}")
    return _rg(_C._full(_shape(shape), fill_value, _as_dtype(dtype), device), requires_grad)


def _like(x: Tensor, dtype: Any, device: Any):
    return (x.dtype if dtype is None else _as_dtype(dtype)), (x.device if device is None else device)


def _preserved_strides(x: Tensor) -> Optional[tuple]:
    """The strides PyTorch's memory_format=preserve_format gives a tensor made like x, or
    None when they are the row-major ones: x's own strides when x is non-overlapping and
    dense (e.g. a transpose), else dense strides in x's stride order (infer_dense_strides)."""
    if not isinstance(x, Tensor) or x.ndim < 2 or x.is_contiguous():
        return None
    shape, strides = tuple(x.shape), tuple(x.stride())
    if 0 in shape:
        return None
    if not _non_overlapping_and_dense(shape, strides):
        strides = _infer_dense_strides(shape, strides)
    row_major, acc = [0] * len(shape), 1
    for i in reversed(range(len(shape))):
        row_major[i] = acc
        acc *= builtins.max(shape[i], 1)
    return None if tuple(row_major) == strides else strides


def _non_overlapping_and_dense(shape: tuple, strides: tuple) -> builtins.bool:
    perm = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d]))
    need = 1
    for d in perm:
        if shape[d] < 2:
            return True
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def _infer_dense_strides(shape: tuple, strides: tuple) -> tuple:
    """ATen's infer_dense_strides: dims sorted by stride (stable insertion sort, zero strides
    stay in place, ties put the smaller size inner), then packed densely."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0
    for i in range(1, n):
        d1 = i
        for j in range(1, i + 1):
            d0 = i - j
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    out, acc = [0] * n, 1
    for d in perm:
        out[d] = acc
        acc *= builtins.max(shape[d], 1)
    return tuple(out)


def _like_layout(x: Tensor, flat: Any) -> Tensor:
    """flat(shape) -> a row-major tensor; the result laid out like x (preserve_format)."""
    st = _preserved_strides(x)
    if st is None:
        return flat(tuple(x.shape))
    return flat((math.prod(x.shape),)).as_strided(tuple(x.shape), st)


def empty_like(x: Tensor, /, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """An uninitialized tensor like x (laid out like x when x is, e.g., a transpose:
    PyTorch's preserve_format)."""
    d, dev = _like(x, dtype, device)
    return _rg(_like_layout(x, lambda shape: _C._empty(shape, d, dev)), requires_grad)


def zeros_like(x: Tensor, /, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """Zeros with x's shape (and layout, as empty_like), dtype and device unless given."""
    d, dev = _like(x, dtype, device)
    return _rg(_like_layout(x, lambda shape: _C._full(shape, 0, d, dev)), requires_grad)


def ones_like(x: Tensor, /, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """Ones with x's shape (and layout, as empty_like), dtype and device unless given."""
    d, dev = _like(x, dtype, device)
    return _rg(_like_layout(x, lambda shape: _C._full(shape, 1, d, dev)), requires_grad)


def full_like(x: Tensor, /, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """fill_value with x's shape (and layout, as empty_like), dtype and device unless given;
    a value that overflows the dtype raises RuntimeError like PyTorch."""
    d, dev = _like(x, dtype, device)
    return _rg(_like_layout(x, lambda shape: _C._full(shape, fill_value, d, dev)), requires_grad)


def tensor(data: Any, *, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False) -> Tensor:
    """torch.tensor-style constructor: always copies `data` (asarray with copy=True), onto
    the default device unless `device` says otherwise (torch.tensor does the same)."""
    if device is None:
        device = _default_device_or_none()
    return asarray(data, dtype=dtype, device=device, copy=True, requires_grad=requires_grad)


def _number(v: Any, op: str, name: str) -> Any:
    """A Python number from an int/float/complex, a NumPy scalar or a one-element tensor."""
    if isinstance(v, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return v
    if isinstance(v, Tensor):
        if v.ndim != 0:
            raise TypeError(f"{op}: {name} must be a number or a 0-d tensor, got shape {v.shape}")
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if hasattr(v, "__index__"):
        return v.__index__()
    if hasattr(v, "__float__"):
        return builtins.float(v)
    raise TypeError(f"{op}: {name} must be a number, got {type(v).__name__}")


def arange(start: Union[int, float], /, stop: Optional[Union[int, float]] = None,
           step: Union[int, float] = 1, *, dtype: Any = None, device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """Evenly spaced values in the half-open interval [start, stop): shape (n,) with
    n = max(0, ceil((stop - start) / step)) (NumPy's rule).

    Values are start + i * step computed in double precision, then cast (NumPy instead steps by
    (start + step) - start, which can drift by an ulp or so over long float ranges).
    One argument means arange(0, start). The dtype defaults to int64 when every argument is an
    int and float32 when any is a float.
    """
    start = _number(start, "arange", "start")
    if stop is None:
        start, stop = 0, start
    stop = _number(stop, "arange", "stop")
    step = _number(step, "arange", "step")
    args = (start, stop, step)
    if any(isinstance(a, builtins.complex) for a in args):
        raise TypeError("arange: start, stop and step must be real numbers")
    if dtype is None:
        dtype = float32 if any(isinstance(a, builtins.float) for a in args) else int64
    dtype = _as_dtype(dtype)
    if any(isinstance(a, builtins.float) for a in args) and _is_int_dtype(dtype):
        return _rg(_int_arange_of_floats(start, stop, step, dtype, device), requires_grad)
    return _rg(_C._arange(start, stop, step, dtype, device), requires_grad)


def _is_int_dtype(dt: Any) -> builtins.bool:
    from . import _dtypes
    return dt in (_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8,
                  _dtypes.uint16, _dtypes.uint32, _dtypes.uint64)


def _int_arange_of_floats(start: Any, stop: Any, step: Any, dtype: Any, device: Any) -> Tensor:
    """arange with float arguments and an integer dtype, as PyTorch computes it: the values
    are trunc(start) + i * trunc(step). For int64 the length comes from the truncated
    arguments too (a step truncating to 0 raises ValueError); for the other integer dtypes
    from ceil((stop - start) / step) over the float arguments."""
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    xstart, xstep = builtins.int(start), builtins.int(step)
    if dtype == int64:
        if xstep == 0:
            raise ValueError("arange: step must be nonzero")
        xstop = builtins.int(stop)
        n = builtins.max(0, -((xstart - xstop) // xstep))  # ceil((xstop - xstart) / xstep)
    else:
        n = builtins.max(0, math.ceil((builtins.float(stop) - builtins.float(start)) / step))
    idx = _C._arange(0, n, 1, int64, device)
    return _C._astype(idx * xstep + xstart, dtype, False)


def linspace(start: Union[int, float, complex], stop: Union[int, float, complex], /, num: int, *,
             dtype: Any = None, device: Any = None, endpoint: builtins.bool = True, requires_grad: builtins.bool = False) -> Tensor:
    """`num` evenly spaced values from start to stop (stop included when endpoint): shape (num,).

    Computed in double precision as start + i * (stop - start) / div (div = num - 1 with the
    endpoint, else num), and the last element is exactly stop when endpoint; then cast.
    The dtype defaults to float32, or complex64 when start or stop is complex.
    """
    start = _number(start, "linspace", "start")
    stop = _number(stop, "linspace", "stop")
    if dtype is None:
        dtype = complex64 if isinstance(start, builtins.complex) or isinstance(stop, builtins.complex) else float32
    if _is_int_dtype(_as_dtype(dtype)):
        return _rg(_int_linspace(start, stop, num, _as_dtype(dtype), builtins.bool(endpoint), device),
                   requires_grad)
    return _rg(_C._linspace(start, stop, num, _as_dtype(dtype), builtins.bool(endpoint), device), requires_grad)


def _int_linspace(start: Any, stop: Any, num: int, dtype: Any, endpoint: builtins.bool,
                  device: Any) -> Tensor:
    """linspace with an integer dtype, as PyTorch computes it: start and stop are truncated to
    integers, the step (stop - start) / (num - 1) is a double, the first half of the values
    is start + i * step and the second half stop - (num - 1 - i) * step, each truncated
    toward zero."""
    if isinstance(start, builtins.complex) or isinstance(stop, builtins.complex):
        raise TypeError("linspace: complex endpoints need a complex dtype")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {num}")
    a, b = builtins.int(start), builtins.int(stop)
    if num == 1:
        vals = np.array([a], dtype=np.int64)
    else:
        i = np.arange(num, dtype=np.float64)
        if endpoint:
            step = (builtins.float(b) - builtins.float(a)) / (num - 1) if num > 1 else 0.0
            half = num // 2
            v = np.where(i < half, a + step * i, b - step * (num - 1 - i))
        else:
            v = a + ((builtins.float(b) - builtins.float(a)) / num) * i if num else i
        vals = np.trunc(v).astype(np.int64)
    return asarray(vals, dtype=dtype, device=device)


def eye(n_rows: int, n_cols: Optional[int] = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None, requires_grad: builtins.bool = False) -> Tensor:
    """A (n_rows, n_cols) tensor with ones on the k-th diagonal (k > 0 above the main one)."""
    return _rg(_C._eye(n_rows, n_rows if n_cols is None else n_cols, k, _dt(dtype, float32), device), requires_grad)


def _band(op: str, x: Tensor, k: int, diagonal: Optional[int]) -> int:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a tensor, got {type(x).__name__}")
    return k if diagonal is None else diagonal


def tril(x: Tensor, /, *, k: int = 0, diagonal: Optional[int] = None) -> Tensor:
    """The lower triangle of each matrix in x (..., M, N): elements with col - row <= k are kept,
    the rest are zero. `diagonal=` is PyTorch's name for k."""
    return _C._tril(x, _band("tril", x, k, diagonal))


def triu(x: Tensor, /, *, k: int = 0, diagonal: Optional[int] = None) -> Tensor:
    """The upper triangle of each matrix in x (..., M, N): elements with col - row >= k are kept,
    the rest are zero. `diagonal=` is PyTorch's name for k."""
    return _C._triu(x, _band("triu", x, k, diagonal))


def meshgrid(*arrays: Tensor, indexing: str = "xy") -> list:
    """Coordinate grids from 1-D tensors x1 (N1,), x2 (N2,), ... (0-d ones count as 1-D of
    one element, as in PyTorch): with indexing='xy' each
    result has shape (N2, N1, N3, ...), with 'ij' (N1, N2, N3, ...). The results are broadcast
    views of the inputs (read-only in spirit: writing to one writes to many elements)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = tuple(arrays[0])
    for i, a in enumerate(arrays):
        if not isinstance(a, Tensor):
            raise TypeError(f"meshgrid: argument {i} must be a tensor, got {type(a).__name__}")
        if a.ndim > 1:
            raise ValueError(f"meshgrid: argument {i} must be 0-D or 1-D, got shape {a.shape}")
    # like torch, a 0-d tensor counts as a 1-D tensor of one element
    arrays = tuple(_C._reshape(a, (1,), -1) if a.ndim == 0 else a for a in arrays)
    n = len(arrays)
    pos = list(range(n))
    if indexing == "xy" and n >= 2:
        pos[0], pos[1] = 1, 0
    shape = [0] * n
    for i, a in enumerate(arrays):
        shape[pos[i]] = a.shape[0]
    out = []
    for i, a in enumerate(arrays):
        view = [1] * n
        view[pos[i]] = a.shape[0]
        out.append(_C._broadcast_to(_C._reshape(a, tuple(view), -1), tuple(shape)))
    return out
