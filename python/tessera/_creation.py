"""Creation functions: the array API's (asarray, zeros, ones, empty, full, arange, linspace,
eye, *_like, ...) in every form PyTorch also accepts (``ts.zeros(2, 3)``, ``size=``,
``requires_grad=``, ``memory_format=``, the default dtype of Note [default dtype] in
_dtypes.py), and torch's others: x.new_*, rand_like/randn_like/randint_like, from_numpy,
as_tensor, scalar_tensor, is_tensor/numel and friends, tril_indices/triu_indices, logspace."""
from __future__ import annotations

import builtins
import warnings
import math
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _C
from ._C import Tensor
from ._dtypes import (_as_dtype, _default, _default_complex, float32, float64, complex64,
                      complex128, int64, uint64, bool as bool_)

__all__ = ["asarray", "tensor", "empty", "zeros", "ones", "full", "empty_like", "zeros_like",
           "ones_like", "full_like", "arange", "linspace", "eye", "tril", "triu", "meshgrid",
           "set_default_device", "get_default_device", "rand_like", "randn_like",
           "randint_like", "from_numpy", "as_tensor", "is_tensor", "is_floating_point",
           "is_complex", "numel", "tril_indices", "triu_indices", "logspace", "scalar_tensor",
           "is_nonzero"]

ShapeLike = Union[int, Sequence[int]]


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
    if dtype is None and _default["dtype"] != float32:
        dtype = _python_default_dtype(obj)  # Python floats take the default dtype
    if copy is not None and not isinstance(copy, (builtins.bool, np.bool_)):
        raise TypeError(f"asarray: copy must be True, False or None, got {type(copy).__name__} "
                        f"({copy!r})")
    out = _asarray_host(obj, dtype=dtype, copy=copy)
    if device is not None and _C.Device(device) != out.device:
        if copy is False:
            raise ValueError(f"asarray: copy=False but moving to {device} needs a copy")
        out = out.to_device(device)
    return _rg(out, requires_grad)


def _python_default_dtype(obj: Any) -> Any:
    """The default (complex) dtype when obj is a Python float (complex) or a nested list/tuple
    whose widest element is one (Note [default dtype]); None otherwise."""
    if type(obj) in (builtins.float, builtins.complex):
        kind: Any = type(obj)
    elif isinstance(obj, (list, tuple)):
        kind = _nested_kind(obj)
    else:
        return None
    return _default["dtype"] if kind is builtins.float else \
        _default_complex() if kind is builtins.complex else None


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
    fdef = _default["dtype"]
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


# zeros/ones/empty, full, the *_like functions (random ones too), arange, linspace,
# logspace, eye, tril/triu, tril_indices/triu_indices, meshgrid,
# scalar_tensor, empty_strided/empty_permuted, fill and the tensor queries in every argument
# form (torch's varargs sizes, size=, n=/m=, diagonal=, layout/pin_memory/memory_format/out):
# the C++ bindings themselves (csrc/python/bind_creation.cpp).
from ._C import (empty, zeros, ones, full, empty_like, zeros_like, ones_like,  # noqa: E402
                 full_like, eye, tril, triu, rand_like, randn_like, randint_like, scalar_tensor,
                 is_tensor, is_floating_point, is_complex, is_nonzero, numel, fill,
                 empty_strided, empty_permuted, arange, linspace, logspace, meshgrid,
                 tril_indices, triu_indices)


def tensor(data: Any, *, dtype: Any = None, device: Any = None,
           requires_grad: builtins.bool = False) -> Tensor:
    """torch.tensor-style constructor: always copies `data` (asarray with copy=True), onto
    the default device unless `device` says otherwise (torch.tensor does the same)."""
    if device is None:
        device = _default_device_or_none()
    return asarray(data, dtype=dtype, device=device, copy=True, requires_grad=requires_grad)


# ---- x.new_*
def _new_args(self: Tensor, dtype: Any, device: Any) -> dict:
    return {"dtype": self.dtype if dtype is None else _as_dtype(dtype),
            "device": self.device if device is None else device}


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: builtins.bool = False) -> Tensor:
    """A copy of `data` as a new leaf tensor with this tensor's dtype and device (unless given)."""
    if isinstance(data, Tensor):
        data = data.detach()
    return asarray(data, copy=True, requires_grad=requires_grad, **_new_args(self, dtype, device))


# ---- interop and queries
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing `ndarray`'s memory (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    return asarray(ndarray, copy=False, device="cpu")  # never the default device (torch)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor, sharing memory when dtype and device allow (torch.as_tensor)."""
    if isinstance(data, Tensor):
        out = data
        if device is not None and _C.Device(device) != data.device:
            out = out.to(device)
        return out if dtype is None else out.to(_as_dtype(dtype))
    return asarray(data, dtype=dtype, device=device)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over an object exposing the buffer protocol (`count` items of `dtype`
    from byte `offset`). tessera copies the bytes (torch shares them)."""
    import numpy as np
    ts = _ns()
    np_dt = np.dtype(str(dtype).rsplit(".", 1)[-1]) if str(dtype) != "bfloat16" else None
    if np_dt is None:
        raise TypeError("frombuffer: bfloat16 is not supported")
    nbytes = memoryview(buffer).nbytes
    if offset < 0 or offset > nbytes - (1 if nbytes else 0):
        raise ValueError(f"both buffer length ({nbytes}) and offset ({offset}) must be "
                         "non-negative and offset must be less than the buffer length")
    if count == 0 or (count < 0 and (nbytes - offset) % np_dt.itemsize):
        raise ValueError(f"buffer length ({nbytes - offset} after offset) must be a multiple of "
                         f"element size ({np_dt.itemsize})")
    arr = np.frombuffer(buffer, dtype=np_dt, count=count, offset=offset)
    out = ts.asarray(arr.copy())
    if requires_grad:
        out.requires_grad_(True)
    return out


def _range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Deprecated torch.range: like arange but *including* `end`, float by default."""
    ts = _ns()
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = ts.get_default_dtype() if dtype is None else dtype
    out = (ts.arange(n, dtype=ts.float64) * step + start).astype(dt)
    if device is not None:
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


_range.__name__ = _range.__qualname__ = "range"  # ts.range (served lazily: Python's builtin name)


def _ns() -> Any:
    import tessera
    return tessera


__all__ += ["fill", "empty_strided", "frombuffer", "empty_permuted"]
