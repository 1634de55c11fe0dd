"""torch's positional ``dim`` for namespace functions whose standard signature makes axis
keyword-only: ``ts.sum(x, 1)``, ``ts.max(x, 1)`` (-> (values, indices)), ``ts.std(x, 0)``,
``ts.stack(ts_, 1)``, ``ts.roll(x, 1, 0)``, ``ts.flip(x, [0])``, ``ts.argmax(x, 1)``,
and ``ts.sort(x, 1)``.

Note [positional dim]: the array API spells these ``f(x, /, *, axis=...)``, so a call with a
positional dim can only come from torch-style code and gets torch's meaning (max/min/sort
return (values, indices), std/var are unbiased by default, like the Tensor methods). The same
holds for max/min/sort/std/var called with torch's ``dim=`` keyword (``ts.max(x, dim=1)``
unpacks like torch's), and for std/var called with torch-only ``keepdim=`` or ``unbiased=``
(``ts.var(x, keepdim=True)`` is unbiased, as in torch). Calls with ``axis=`` or no dim go to the standard function unchanged.
Each wrapper keeps the standard signature for introspection.
"""
from __future__ import annotations

import builtins
import functools
from typing import Any, Callable

from ._C import Tensor

__all__ = ["sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin", "all", "any",
           "stack", "roll", "flip", "argsort", "diff", "sort", "where"]


def _positional(std: Callable[..., Any], torch_style: Callable[..., Any]) -> Callable[..., Any]:
    """std(x, **kw) unless extra positional arguments come: then torch_style(x, *args, **kw)."""
    @functools.wraps(std)
    def wrapper(x: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            return torch_style(x, *args, **kwargs)
        return std(x, **kwargs)
    return wrapper


def _reduction(std: Callable[..., Any], with_dtype: builtins.bool = False) -> Callable[..., Any]:
    def torch_style(x: Any, dim: Any, keepdim: builtins.bool = False, **kw: Any) -> Any:
        if kw.pop("out", None) is not None:
            raise NotImplementedError(f"{std.__name__}: out= is not supported")
        if not with_dtype and "dtype" in kw:
            raise TypeError(f"{std.__name__}: unexpected keyword argument 'dtype'")
        return std(x, axis=tuple(dim) if isinstance(dim, list) else dim, keepdims=keepdim, **kw)
    return _positional(std, torch_style)


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


def _where(std: Callable[..., Any]) -> Callable[..., Any]:
    """where(condition, x1, x2); torch's one-argument where(condition) is nonzero(as_tuple)."""
    @functools.wraps(std)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            from ._indexing import nonzero
            return nonzero(args[0])
        return std(*args, **kwargs)  # the binding names missing arguments and unknown keywords
    return wrapper


def _build() -> dict:
    from . import _statistical as st, _manipulation as mp, _sorting as so
    return {
        "sum": _reduction(st.sum, True), "prod": _reduction(st.prod, True),
        "mean": _reduction(st.mean, True), "all": _reduction(st.all), "any": _reduction(st.any),
        "argmax": _reduction(st.argmax), "argmin": _reduction(st.argmin),
        "max": _method_style(st.max, "max"), "min": _method_style(st.min, "min"),
        "std": _method_style(st.std, "std", ("keepdim", "unbiased")),
        "var": _method_style(st.var, "var", ("keepdim", "unbiased")),
        "stack": _positional(mp.stack, lambda ts_, dim, **kw: mp.stack(ts_, axis=dim, **kw)),
        "roll": _roll(mp.roll), "flip": _positional(mp.flip, lambda x, dims: mp.flip(x, axis=dims)),
        "argsort": _positional(so.argsort, lambda x, dim=-1, descending=False, stable=True:
                               so.argsort(x, axis=dim, descending=descending, stable=stable)),
        "sort": _method_style(so.sort, "sort"), "where": _where(st.where),
        "diff": _positional(st.diff, lambda x, n=1, dim=-1, prepend=None, append=None:
                            st.diff(x, n=n, axis=dim, prepend=prepend, append=append)),
    }


def _roll(std: Callable[..., Any]) -> Callable[..., Any]:
    """roll(x, shift, *, axis) that also takes torch's roll(x, shifts, dims) and shifts=."""
    @functools.wraps(std)
    def wrapper(x: Any, *args: Any, **kwargs: Any) -> Any:
        if "shifts" in kwargs:
            if args:
                raise TypeError("roll: got the shift both positionally and as shifts=")
            args = (kwargs.pop("shifts"),)
        if len(args) == 2:
            if "axis" in kwargs or "dims" in kwargs:
                raise TypeError("roll: got the dims both positionally and as a keyword")
            return std(x, args[0], axis=args[1], **kwargs)
        return std(x, *args, **kwargs)
    return wrapper


globals().update(_build())
