"""torch.set_default_dtype / get_default_dtype for the creation functions.

Note [default dtype]: the default floating dtype (float32 unless set) is what the namespace's
creation functions give when no dtype is passed and the values are Python floats or none at
all: zeros/ones/empty/full(float)/eye/linspace/logspace/arange(float)/rand/randn/
tensor/asarray/as_tensor/scalar_tensor of Python floats (complex Python values take the
matching complex dtype). NumPy arrays and tensors keep their own dtype. The C++ ops' own
int -> float promotions (e.g. ts.sqrt of an int tensor) stay float32, as the array API
namespace defines them.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable

from ._dtypes import _as_dtype, bfloat16, complex64, complex128, float16, float32, float64

__all__ = ["get_default_dtype", "set_default_dtype", "zeros", "ones", "empty", "full", "eye",
           "linspace", "logspace", "arange", "rand", "randn", "tensor", "asarray", "as_tensor",
           "scalar_tensor"]

_state = {"dtype": float32}
_FLOATS = (float16, bfloat16, float32, float64)


def get_default_dtype() -> Any:
    """The default floating dtype of the creation functions (float32 unless set)."""
    return _state["dtype"]


def set_default_dtype(d: Any) -> None:
    """Sets the default floating dtype (float16, bfloat16, float32 or float64) of the creation
    functions (Note [default dtype])."""
    dt = _as_dtype(d)
    if dt not in _FLOATS:
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type, got {dt}")
    _state["dtype"] = dt


def _complex_default() -> Any:
    return complex128 if _state["dtype"] == float64 else complex64


def _python_kind(obj: Any) -> Any:
    """float/complex when obj is a Python float/complex or a nested list/tuple holding one."""
    from ._creation import _nested_kind
    if isinstance(obj, (builtins.float, builtins.complex)) and type(obj) in (builtins.float, builtins.complex):
        return type(obj)
    if isinstance(obj, (list, tuple)):
        kind = _nested_kind(obj)
        return kind if kind in (builtins.float, builtins.complex) else None
    return None


def _always_float(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn(..., dtype=None) whose default result is floating: the default dtype is passed."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is None and _state["dtype"] != float32:
            kwargs["dtype"] = _state["dtype"]
        return fn(*args, **kwargs)
    return wrapper


def _random(fn: Callable[..., Any]) -> Callable[..., Any]:
    """rand/randn with the default dtype that also take torch's requires_grad=."""
    @functools.wraps(fn)
    def wrapper(*args: Any, requires_grad: builtins.bool = False, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is None and _state["dtype"] != float32:
            kwargs["dtype"] = _state["dtype"]
        out = fn(*args, **kwargs)
        return out.requires_grad_(True) if requires_grad else out
    return wrapper


def _from_values(fn: Callable[..., Any], data_pos: int = 0) -> Callable[..., Any]:
    """fn(data, ..., dtype=None): Python float (complex) data takes the default (complex) dtype."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is None and _state["dtype"] != float32 and len(args) > data_pos:
            kind = _python_kind(args[data_pos])
            if kind is builtins.float:
                kwargs["dtype"] = _state["dtype"]
            elif kind is builtins.complex:
                kwargs["dtype"] = _complex_default()
        return fn(*args, **kwargs)
    return wrapper


def _arange(fn: Callable[..., Any]) -> Callable[..., Any]:
    """arange; torch's keywords start= and end= are accepted (end= as stop=; arange(end=n)
    counts from 0)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "end" in kwargs:
            if "stop" in kwargs:
                raise TypeError("arange: got both stop= and its alias end=")
            kwargs["stop"] = kwargs.pop("end")
        if "start" in kwargs:
            if args:
                raise TypeError("arange: got start both positionally and as a keyword")
            if "stop" not in kwargs:
                raise TypeError('arange() missing 1 required positional argument: "end"')
            args = (kwargs.pop("start"),)
        elif not args and "stop" in kwargs:
            args = (0,)
        if kwargs.get("dtype") is None and _state["dtype"] != float32:
            vals = list(args) + [kwargs.get(k) for k in ("start", "stop", "step", "end")]
            if builtins.any(type(v) is builtins.float for v in vals):
                kwargs["dtype"] = _state["dtype"]
        return fn(*args, **kwargs)
    return wrapper


def _full(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(shape: Any, fill_value: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is None and _state["dtype"] != float32:
            if type(fill_value) is builtins.float:
                kwargs["dtype"] = _state["dtype"]
            elif type(fill_value) is builtins.complex:
                kwargs["dtype"] = _complex_default()
        return fn(shape, fill_value, *args, **kwargs)
    return wrapper


def _build() -> dict:
    from . import _creation, random
    from . import _torch_compat_creation as tcc
    return {
        "zeros": _always_float(tcc.zeros), "ones": _always_float(tcc.ones),
        "empty": _always_float(tcc.empty), "eye": _always_float(_creation.eye),
        "linspace": _linspace(_creation.linspace),
        "logspace": _always_float(tcc.logspace), "rand": _random(random.rand),
        "randn": _random(random.randn), "arange": _arange(_creation.arange),
        "full": _full(_creation.full), "tensor": _from_values(_creation.tensor),
        "asarray": _from_values(_creation.asarray), "as_tensor": _from_values(tcc.as_tensor),
        "scalar_tensor": _always_float(tcc.scalar_tensor),
    }


def _linspace(fn: Callable[..., Any]) -> Callable[..., Any]:
    """linspace: real endpoints take the default dtype; complex ones the complex default.
    torch's end= and steps= are accepted as stop= and num=."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "steps" in kwargs:
            kwargs["num"] = kwargs.pop("steps")
        if "end" in kwargs:
            if "stop" in kwargs:
                raise TypeError("linspace: got both stop= and its alias end=")
            kwargs["stop"] = kwargs.pop("end")
        # torch names start and end as keywords; the standard makes them positional-only
        if "start" in kwargs and not args:
            args = (kwargs.pop("start"),)
        if "stop" in kwargs and len(args) == 1:
            args = (args[0], kwargs.pop("stop"))
        if kwargs.get("dtype") is None and _state["dtype"] != float32:
            ends = list(args[:2]) + [kwargs.get("start"), kwargs.get("stop")]
            cplx = builtins.any(isinstance(v, builtins.complex) for v in ends)
            kwargs["dtype"] = _complex_default() if cplx else _state["dtype"]
        return fn(*args, **kwargs)
    return wrapper


globals().update(_build())
