"""The namespace guard: typed errors for non-tensor arguments of the public functions of the
families still written in Python (ts.*, ts.linalg, ts.fft, ts.random; Tensor methods raise
their own errors, Note [Tensor methods written in Python] in csrc/python/tensor_method.cpp).

Many such functions are Python wrappers that read ``x.ndim`` / ``x.dtype`` before calling
the core; given ``None`` or a string they would fail with an ``AttributeError`` naming an
attribute the caller never used. :func:`guarded` wraps each public Python function so
that such an ``AttributeError`` (one raised on an argument the caller passed) becomes
``TypeError("op: argument 1 must be a tensor, got NoneType")``. Working calls pay one Python
frame; the ``try`` itself is free in CPython 3.11+.
"""
from __future__ import annotations

import functools
import re
import types
from typing import Any, Callable

from ._C import Tensor

_WRAPPED: dict[int, Callable] = {}


class IntRangeError(OverflowError, ValueError):
    """An integer argument beyond what the op can represent (a bad value)."""


class NonFiniteIntError(OverflowError, TypeError):
    """inf or nan where an integer belongs (a float given for an int)."""  # id(original) -> wrapper, so aliases stay one object


def _culprit(obj: object, args: tuple, kwargs: dict) -> str | None:
    """Which argument the failing attribute lookup was made on, or None if not the caller's."""
    def holds(v: Any) -> bool:
        if v is obj:
            return True
        return isinstance(v, (list, tuple)) and any(e is obj for e in v)

    for i, a in enumerate(args, 1):
        if holds(a):
            return f"argument {i}" + ("" if a is obj else " (a sequence)")
    for k, v in kwargs.items():
        if holds(v):
            return f"argument '{k}'" + ("" if v is obj else " (a sequence)")
    return None


_NUMBER_FROM_STR = re.compile(r"invalid literal for int\(\) with base|could not convert "
                              r"string to float|complex\(\) arg is a malformed string")


def _has_str(args: tuple, kwargs: dict) -> bool:
    for v in (*args, *kwargs.values()):
        if isinstance(v, str) or (isinstance(v, (list, tuple))
                                  and any(isinstance(e, str) for e in v)):
            return True
    return False


def _name_op(e: BaseException, name: str) -> None:
    """Prefix the op's name to a one-string message that does not start with it."""
    if len(e.args) == 1 and isinstance(e.args[0], str) and not e.args[0].startswith(name):
        e.args = (f"{name}: {e.args[0]}",)


_TRANSPARENT = False


def _guard(fn: Callable, name: str) -> Callable:
    if id(fn) in _WRAPPED:
        return _WRAPPED[id(fn)]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj = getattr(e, "obj", None)
            where = _culprit(obj, args, kwargs)
            if where is None:
                raise
            if isinstance(obj, Tensor):  # a tensor where something else was expected
                raise TypeError(f"{name}: {where} cannot be a tensor ({e})") from None
            if not hasattr(Tensor, getattr(e, "name", None) or "_"):  # not tensor-like use
                raise TypeError(f"{name}: {where} has an unsupported type "
                                f"{type(obj).__name__} ({e})") from None
            what = "a tensor" if "sequence" not in where else "tensors"
            raise TypeError(f"{name}: {where} must be {what}, "
                            f"got {type(obj).__name__}") from None

        except OverflowError as e:
            # int(inf) / int(nan) is a float where an int belongs; a huge int is a bad value.
            # Both stay OverflowErrors too (NumPy raises those for such input).
            msg = str(e) if str(e).startswith(name) else f"{name}: {e}"
            if "infinity" in msg or "NaN" in msg:
                raise NonFiniteIntError(msg) from None
            raise IntRangeError(msg) from None
        except ValueError as e:
            # int("abc") / float("abc") inside the wrapper: the caller passed a string where
            # a number belongs, a type error (as in PyTorch), not a bad value.
            if _NUMBER_FROM_STR.search(str(e)) and _has_str(args, kwargs):
                raise TypeError(f"{name}: expected a number, got str ({e})") from None
            _name_op(e, name)
            raise
        except MemoryError as e:
            if type(e).__module__.startswith("numpy"):  # NumPy's: args are (shape, dtype)
                raise MemoryError(f"{name}: {e}") from None
            _name_op(e, name)
            raise
        except (TypeError, IndexError, RuntimeError, NotImplementedError) as e:
            _name_op(e, name)
            raise

    wrapper.__wrapped_by_arg_errors__ = True  # type: ignore[attr-defined]
    _WRAPPED[id(fn)] = wrapper
    global _TRANSPARENT
    if not _TRANSPARENT:  # autocast's nesting check looks through this wrapper (one code object)
        from .amp._policy import transparent
        transparent(wrapper)
        _TRANSPARENT = True
    return wrapper


def guarded(namespace: dict) -> dict:
    """The guarded forms of a module namespace's public plain-Python functions (defined in
    tessera): a module applies them to itself with ``globals().update(guarded(globals()))``,
    so no module sets attributes on another."""
    out = {}
    for n, f in list(namespace.items()):
        if n.startswith("_") or not isinstance(f, types.FunctionType):
            continue
        if getattr(f, "__wrapped_by_arg_errors__", False):
            continue
        if not getattr(f, "__module__", "").startswith("tessera"):
            continue
        out[n] = _guard(f, n)
    return out
