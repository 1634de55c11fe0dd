"""dtypes, type promotion queries, finfo/iinfo (the array API's data type functions)."""
from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Any, Union

from . import _C
from ._C import (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: A004
                 float16, bfloat16, float32, float64, complex64, complex128, dtype, Tensor)

__all__ = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "bfloat16", "float32", "float64", "complex64", "complex128", "dtype",
           "half", "double", "cfloat", "cdouble", "short", "long",
           "result_type", "can_cast", "finfo", "iinfo", "isdtype", "astype", "get_default_dtype",
           "set_default_dtype", "promote_types"]

_ALL = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
        float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in _ALL}

# torch-style aliases
half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64  # noqa: A001


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def _as_dtype(x: Any) -> dtype:
    return _C._to_dtype(x)


def result_type(*arrays_and_dtypes: Any) -> dtype:
    """The dtype that results from promoting all arguments (tensors, dtypes, Python scalars).

    Python scalars are weak: they take the tensors' dtype where the kinds allow.
    """
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    strong = []
    scalars = []
    for a in arrays_and_dtypes:
        if isinstance(a, Tensor):
            strong.append(a.dtype)
        elif isinstance(a, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
            scalars.append(a)
        else:
            strong.append(_as_dtype(a))
    if not strong:
        raise ValueError("result_type: at least one array or dtype is required (got only Python scalars)")
    r = strong[0]
    for d in strong[1:]:
        r = _C._promote_types(r, d)
    for s in scalars:
        r = _C._promote_with_scalar(r, s)
    return r


def can_cast(from_: Union[dtype, Tensor], to: dtype, /) -> builtins.bool:
    """Whether `from_` casts to `to` without loss, per the promotion lattice."""
    f = from_.dtype if isinstance(from_, Tensor) else _as_dtype(from_)
    return _C._can_cast(f, _as_dtype(to))


@dataclass(frozen=True)
class finfo_object:
    bits: builtins.int
    eps: builtins.float
    max: builtins.float
    min: builtins.float
    smallest_normal: builtins.float
    dtype: dtype

    @property
    def tiny(self) -> builtins.float:
        return self.smallest_normal

    @property
    def resolution(self) -> builtins.float:
        return 10.0 ** -math.floor(-math.log10(self.eps))


@dataclass(frozen=True)
class iinfo_object:
    bits: builtins.int
    max: builtins.int
    min: builtins.int
    dtype: dtype


def finfo(type: Union[dtype, Tensor, None] = None, /) -> finfo_object:  # noqa: A002
    """Machine limits of a floating-point or complex dtype (complex gives its real part's);
    without an argument, of the default float dtype (torch.finfo())."""
    if type is None:
        type = get_default_dtype()
    d = type.dtype if isinstance(type, Tensor) else _as_dtype(type)
    bits, eps, mx, mn, smallest = _C._finfo(d)
    real = {complex64: float32, complex128: float64}.get(d, d)
    return finfo_object(bits, eps, mx, mn, smallest, real)


def iinfo(type: Union[dtype, Tensor], /) -> iinfo_object:  # noqa: A002
    """Limits of an integer dtype."""
    d = type.dtype if isinstance(type, Tensor) else _as_dtype(type)
    bits, mx, mn = _C._iinfo(d)
    return iinfo_object(bits, mx, mn, d)


_KINDS = {
    "bool": (bool,),
    "signed integer": (int8, int16, int32, int64),
    "unsigned integer": (uint8, uint16, uint32, uint64),
    "integral": (int8, int16, int32, int64, uint8, uint16, uint32, uint64),
    "real floating": (float16, bfloat16, float32, float64),
    "complex floating": (complex64, complex128),
    "numeric": (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16,
                float32, float64, complex64, complex128),
}


def isdtype(dtype: dtype, kind: Any) -> builtins.bool:  # noqa: A002
    """Whether `dtype` is of `kind`: a dtype, a kind name ('integral', 'real floating', ...)
    or a tuple of those."""
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"isdtype: expected a tessera dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, _C.dtype):
        return dtype == kind
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(_KINDS)}")
        return dtype in _KINDS[kind]
    raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple, got {kind!r}")


def astype(x: Tensor, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Tensor:
    """x converted to `dtype` (C-style casts; complex -> real keeps the real part).

    copy=False returns x itself when no conversion is needed.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"astype: expected a tessera Tensor, got {type(x).__name__}")
    target = _as_dtype(dtype)
    if not copy and target == x.dtype and device is None:
        return x
    out = _C._astype(x, target, copy)
    if device is not None:
        out = out.to_device(device)
    return out


# ---- the default floating dtype (torch.set_default_dtype / get_default_dtype)
# Note [default dtype]: the default floating dtype (float32 unless set) is what the namespace's
# creation functions give when no dtype is passed and the values are Python floats or none at
# all: zeros/ones/empty/full(float)/eye/linspace/logspace/arange(float)/rand/randn/
# tensor/asarray/as_tensor/scalar_tensor of Python floats (complex Python values take the
# matching complex dtype). NumPy arrays and tensors keep their own dtype. The C++ ops' own
# int -> float promotions (e.g. ts.sqrt of an int tensor) stay float32, as the array API
# namespace defines them.
_default = {"dtype": float32}


def get_default_dtype() -> dtype:
    """The default floating dtype of the creation functions (float32 unless set)."""
    return _default["dtype"]


def set_default_dtype(d: Any) -> None:
    """Sets the default floating dtype (float16, bfloat16, float32 or float64) of the creation
    functions (Note [default dtype])."""
    dt = _as_dtype(d)
    if dt not in (float16, bfloat16, float32, float64):
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {dt}")
    _default["dtype"] = dt
    _C._set_default_float_dtype(dt)  # what the C++ creation functions read


def _default_complex() -> dtype:
    """The complex dtype matching the default float dtype."""
    return complex128 if _default["dtype"] == float64 else complex64


def promote_types(type1: Any, type2: Any) -> dtype:
    """The dtype both promote to (torch.promote_types: no weak scalars)."""
    return result_type(type1, type2)
