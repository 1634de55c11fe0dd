"""PyTorch's argument forms for the namespace functions whose array-API signature lacks them
(issue 17: the layer still to fold into the functions and, in the end, into the pybind11
signatures). Three kinds, each a thin wrapper that passes a standard call straight through:

1. Positional ``dim`` (Note [positional dim] below): ``ts.sum(x, 1)``, ``ts.max(x, 1)``.
2. (torch's extra arguments -- round(decimals=), searchsorted(right=, ...), where(condition) --
   are parsed by their bindings: csrc/python/bind_index_forms.cpp)
3. torch's keyword names: ``ts.stack(tensors=)``, ``ts.full(size=)``, ``x.transpose(dim0=)``,
   ``memory_format=`` on the *_like functions (`build` and `method_keywords`).

Positional dim: torch's positional ``dim`` for namespace functions whose standard signature makes axis
keyword-only: ``ts.sum(x, 1)``, ``ts.max(x, 1)`` (-> (values, indices)), ``ts.std(x, 0)``,
``ts.stack(ts_, 1)``, ``ts.argmax(x, 1)``,
and ``ts.sort(x, 1)``.

Note [positional dim]: the array API spells these ``f(x, /, *, axis=...)``, so a call with a
positional dim can only come from torch-style code and gets torch's meaning (max/min/sort
return (values, indices), std/var are unbiased by default, like the Tensor methods). The same
holds for max/min/sort/std/var called with torch's ``dim=`` keyword (``ts.max(x, dim=1)``
unpacks like torch's), and for std/var called with torch-only ``keepdim=`` or ``unbiased=``
(``ts.var(x, keepdim=True)`` is unbiased, as in torch). Calls with ``axis=`` or no dim go to
the standard function unchanged. Each wrapper keeps the standard signature for
introspection.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable, Dict, Sequence, Tuple

from ._C import Tensor
from ._tensor import _apply_memory_format, clone

# ---- 1. positional dim
# (the reductions' forms are parsed by their bindings: csrc/python/bind_reduction.cpp)
_POSITIONAL_NAMES = ["argsort", "sort"]


def _positional(std: Callable[..., Any], torch_style: Callable[..., Any]) -> Callable[..., Any]:
    """std(x, **kw) unless extra positional arguments come: then torch_style(x, *args, **kw)."""
    @functools.wraps(std)
    def wrapper(x: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            return torch_style(x, *args, **kwargs)
        return std(x, **kwargs)
    return wrapper


def _method_style(std: Callable[..., Any], name: str,
                  torch_keywords: tuple = ()) -> Callable[..., Any]:
    """Calls with a positional dim, torch's dim= or one of `torch_keywords` (keywords only
    torch's overloads take, e.g. std/var's keepdim= and unbiased=) behave as the Tensor
    method `name` (torch semantics); others are the standard function's."""
    @functools.wraps(std)
    def wrapper(x: Any, *args: Any, **kwargs: Any) -> Any:
        torch_kw = builtins.any(k in kwargs for k in torch_keywords) and "axis" not in kwargs \
            and "keepdims" not in kwargs
        if args or ("dim" in kwargs and "axis" not in kwargs) or torch_kw:
            if not isinstance(x, Tensor):
                raise TypeError(f"{name}: expected a Tensor, got {type(x).__name__}")
            return getattr(x, name)(*args, **kwargs)
        return std(x, **kwargs)
    return wrapper


def _build_positional() -> dict:
    from . import _sorting as so
    return {
        "argsort": _positional(so.argsort, lambda x, dim=-1, descending=False, stable=True:
                               so.argsort(x, axis=dim, descending=descending, stable=stable)),
        "sort": _method_style(so.sort, "sort"),
    }


globals().update(_build_positional())


# ---- 3. torch's keyword names
# torch's keyword names for arguments that tessera's functions and methods take under other
# names or positionally only: ``ts.stack(tensors=...)``, ``ts.full(size=..., fill_value=...)``,
# ``ts.take(x, index=...)``, ``x.split(split_size=2, dim=1)``, ``x.transpose(dim0=, dim1=)``,
# ``x.round(decimals=2)``, ``ts.zeros_like(x, memory_format=...)``...
#
# Each wrapper passes a call without keywords straight through (one ``if``), and maps torch's
# keyword names onto the positions of the wrapped function otherwise, so the array API
# standard's signatures (positional-only parameters, axis=/keepdims=) keep working unchanged;
# ``inspect.signature`` still shows the standard signature (``functools.wraps``).
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

    # (full's size= and eye's n=/m= are parsed by the C++ bindings: bind_creation.cpp)
    wrap("isin", [(None, "elements"), (None, "test_elements")], drop=("assume_unique",))
    wrap("manual_seed", [(None, "seed")])
    # (zeros_like/ones_like/empty_like/full_like take memory_format= in C++)
    for name in ("rand_like", "randn_like", "randint_like"):
        if name in ns:
            out[name] = _with_memory_format(ns[name], name)
    out["clone"] = clone
    del _random
    return out


def method_keywords(current: Callable[[str], Any]) -> Dict[str, Any]:
    """Tensor methods with torch's keyword names, wrapping `current(name)` (the method the
    binding table has so far)."""
    out: Dict[str, Any] = {}
    out["chalf"] = _chalf
    return out


__all__ = list(_POSITIONAL_NAMES)
