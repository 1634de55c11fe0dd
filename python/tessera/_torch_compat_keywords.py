"""torch's keyword names for arguments that tessera's functions and methods take under other
names or positionally only: ``ts.stack(tensors=...)``, ``ts.full(size=..., fill_value=...)``,
``ts.take(x, index=...)``, ``x.split(split_size=2, dim=1)``, ``x.transpose(dim0=, dim1=)``,
``x.round(decimals=2)``, ``ts.zeros_like(x, memory_format=...)``...

Each wrapper passes a call without keywords straight through (one ``if``), and maps torch's
keyword names onto the positions of the wrapped function otherwise, so the array API
standard's signatures (positional-only parameters, axis=/keepdims=) keep working unchanged;
``inspect.signature`` still shows the standard signature (``functools.wraps``).
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Dict, Sequence, Tuple

from . import _C
from ._C import Tensor
from ._tensor import _apply_memory_format, clone

__all__: list = []  # filled by build()

# A slot: the names one positional parameter may be given by (the wrapped function's own
# name first, where it has one that it accepts as a keyword; None where it has not).
Slot = Tuple[Any, ...]


def _rebind(op: str, slots: Sequence[Slot], args: tuple, kwargs: Dict[str, Any]
            ) -> Tuple[tuple, Dict[str, Any]]:
    """args extended with the keyword arguments that name the next slots (torch's order);
    a keyword naming a later slot after a gap goes on under the function's own name."""
    n = len(args)
    for slot in slots[:n]:
        for name in slot:
            if name is not None and name in kwargs:
                raise TypeError(f"{op}() got multiple values for argument '{name}'")
    out = list(args)
    gap = False
    for slot in slots[n:]:
        hit = [name for name in slot if name is not None and name in kwargs]
        if len(hit) > 1:
            raise TypeError(f"{op}() got multiple values for argument '{hit[0]}' "
                            f"(also given as '{hit[1]}')")
        if not hit:
            gap = True
            continue
        value = kwargs.pop(hit[0])
        if not gap:
            out.append(value)
        elif slot[0] is not None:
            kwargs[slot[0]] = value
        else:
            raise TypeError(f"{op}() missing an argument before '{hit[0]}'")
    return tuple(out), kwargs


def _keywords(std: Callable[..., Any], op: str, slots: Sequence[Slot],
              drop: Sequence[str] = ()) -> Callable[..., Any]:
    """std that also takes torch's keyword names (slots); keywords in `drop` are accepted
    and ignored (torch's hints with no effect in tessera, e.g. assume_unique=)."""
    names = frozenset(n for slot in slots for n in slot if n is not None) | frozenset(drop)

    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if not kwargs or names.isdisjoint(kwargs):
            return std(*args, **kwargs)
        for name in drop:
            kwargs.pop(name, None)
        args, kwargs = _rebind(op, slots, args, kwargs)
        return std(*args, **kwargs)
    fn.__wrapped_by_arg_errors__ = getattr(std, "__wrapped_by_arg_errors__", False)  # type: ignore[attr-defined]
    return fn


def _method_keywords(std: Callable[..., Any], op: str, slots: Sequence[Slot]) -> Callable[..., Any]:
    names = frozenset(n for slot in slots for n in slot if n is not None)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not kwargs or names.isdisjoint(kwargs):
            return std(self, *args, **kwargs)
        args, kwargs = _rebind(op, slots, args, kwargs)
        return std(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = op
    method.__doc__ = std.__doc__
    method.__wrapped__ = std  # type: ignore[attr-defined]
    return method


# ---- memory_format=
def _with_memory_format(std: Callable[..., Any], op: str) -> Callable[..., Any]:
    @functools.wraps(std)
    def fn(*args: Any, **kwargs: Any) -> Any:
        if "memory_format" not in kwargs:
            return std(*args, **kwargs)
        fmt = kwargs.pop("memory_format")
        from ._torch_legacy import preserve_format
        if fmt is None or fmt is preserve_format:
            return std(*args, **kwargs)
        return _apply_memory_format(op, std(*args, **kwargs), fmt)
    fn.__wrapped_by_arg_errors__ = getattr(std, "__wrapped_by_arg_errors__", False)  # type: ignore[attr-defined]
    return fn


# ---- x.round(decimals=)
def round_decimals(x: Any, decimals: int) -> Any:
    """torch's round(x, decimals=d): round-half-even of x * 10**d, divided back (for d < 0:
    x / 10**-d rounded, multiplied back), as torch computes it."""
    if decimals == 0:
        return _C.round(x)
    if isinstance(x, Tensor) and not x.dtype.is_floating_point and not x.dtype.is_complex:
        raise RuntimeError(f"round_decimals: \"round_decimals\" not implemented for integer "
                           f"tensors ({x.dtype})")
    if decimals > 0:
        p = 10.0 ** decimals
        return _C.divide(_C.round(_C.multiply(x, p)), p)
    p = 10.0 ** (-decimals)
    return _C.multiply(_C.round(_C.divide(x, p)), p)


def _round_method(self: Tensor, *, decimals: int = 0) -> Tensor:
    """Rounds half to even; decimals= rounds to that many decimal places (torch)."""
    if decimals == 0:
        return _C.round(self)
    return round_decimals(self, decimals)


_round_method.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]  (C++ names itself)


# ---- complex32
class MissingDtypeError(TypeError, RuntimeError):
    """A torch dtype tessera does not have (TypeError; RuntimeError as torch raises for
    unsupported dtypes)."""


def _chalf(self: Tensor, memory_format: Any = None) -> Tensor:
    """torch's x.chalf() converts to complex32, a dtype tessera does not have."""
    raise MissingDtypeError("chalf(): tessera has no complex32 (chalf) dtype; use "
                            "x.to(ts.complex64) instead")


def build(ns: Dict[str, Any]) -> Dict[str, Any]:
    """The namespace functions of `ns` (tessera's, being assembled) with torch's keywords."""
    from . import random as _random
    out: Dict[str, Any] = {}

    def wrap(name: str, slots: Sequence[Slot], drop: Sequence[str] = ()) -> None:
        out[name] = _keywords(ns[name], name, slots, drop)

    wrap("stack", [("arrays", "tensors")])
    wrap("concat", [("arrays", "tensors")])
    wrap("full", [("shape", "size"), ("fill_value",)])
    wrap("eye", [(None, "n"), (None, "m")])
    wrap("take", [(None, "input"), (None, "index", "indices")])
    wrap("moveaxis", [(None, "input", "x"), (None, "source"), (None, "destination")])
    wrap("broadcast_to", [(None, "input"), ("shape", "size")])
    wrap("tile", [(None, "input"), (None, "dims", "repetitions")])
    wrap("isin", [(None, "elements"), (None, "test_elements")], drop=("assume_unique",))
    wrap("where", [(None, "condition"), (None, "input"), (None, "other")])
    wrap("manual_seed", [(None, "seed")])
    for name in ("swapaxes", "swapdims", "transpose"):
        wrap(name, [("input",), ("dim0", "axis0"), ("dim1", "axis1")])
    wrap("tensor_split", [("input",), ("indices_or_sections", "sections", "indices",
                                       "tensor_indices_or_sections"), ("dim",)])
    for name in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
                 "randn_like", "randint_like"):
        if name in ns:
            out[name] = _with_memory_format(ns[name], name)
    out["clone"] = clone
    del _random
    __all__[:] = sorted(out)
    return out


def method_keywords(current: Callable[[str], Any]) -> Dict[str, Any]:
    """Tensor methods with torch's keyword names, wrapping `current(name)` (the method the
    binding table has so far)."""
    from ._inplace import make_inplace
    out: Dict[str, Any] = {}
    for name in ("transpose", "swapaxes", "swapdims"):
        out[name] = _method_keywords(current(name), name, [("dim0", "axis0"), ("dim1", "axis1")])
    out["split"] = _method_keywords(current("split"), "split",
                                    [("split_size_or_sections", "split_size"), ("dim",)])
    out["tensor_split"] = _method_keywords(
        current("tensor_split"), "tensor_split",
        [("indices_or_sections", "sections", "indices", "tensor_indices_or_sections"), ("dim",)])
    out["round"] = _round_method
    out["round_"] = make_inplace("round_", _round_method)
    out["chalf"] = _chalf
    return out
