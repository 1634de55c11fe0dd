"""Typed errors for non-tensor arguments of the Python-level public functions.

Many public functions are Python wrappers that read ``x.ndim`` / ``x.dtype`` before calling
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


def _culprit(obj: object, args: tuple, kwargs: dict, first: int) -> str | None:
    """Which argument the failing attribute lookup was made on, or None if not the caller's."""
    def holds(v: Any) -> bool:
        if v is obj:
            return True
        return isinstance(v, (list, tuple)) and any(e is obj for e in v)

    for i, a in enumerate(args):
        if i + first == 0:  # a method's self: an AttributeError on it is not the caller's
            continue
        if holds(a):
            return f"argument {i + first}" + ("" if a is obj else " (a sequence)")
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


def _guard(fn: Callable, name: str, first: int) -> Callable:
    if id(fn) in _WRAPPED:
        return _WRAPPED[id(fn)]

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if first == 0 and (not args or not isinstance(args[0], Tensor)):
            # a Tensor method called through the class on something else (as torch's
            # "descriptor 'erfinv' for 'Tensor' objects doesn't apply to a 'int' object")
            got = type(args[0]).__name__ if args else "nothing"
            raise TypeError(f"descriptor '{name.rsplit('.', 1)[-1]}' for 'Tensor' objects "
                            f"doesn't apply to a '{got}' object")
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj = getattr(e, "obj", None)
            where = _culprit(obj, args, kwargs, first)
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
        out[n] = _guard(f, n, 1)
    return out


def int_arg(op: str, name: str, value: Any) -> int:
    """``value`` as an int; TypeError naming ``op`` and ``name`` for bools, floats and the like,
    ValueError beyond int64."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    v = value.__index__()
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError(f"{op}: {name}={v} is out of range for a 64-bit integer")
    return v


def check_output_size(op: str, shape: "tuple[int, ...] | list[int]", dtype: Any = None,
                      device: Any = None) -> int:
    """The element count of an output of `shape`, checked before any index array or table is
    built for it: RuntimeError (as torch's "storage size calculation overflowed") past
    2^63 - 1 elements; with `dtype`, MemoryError when the output cannot be allocated (probed
    by allocating it, untouched, so no multi-GB intermediate is built first)."""
    numel = 1
    for d in shape:
        numel *= int(d)
    itemsize = 1 if dtype is None else max(getattr(dtype, "itemsize", 8), 1)
    if numel * itemsize >= 1 << 63:
        raise RuntimeError(f"{op}: the output of shape {tuple(int(d) for d in shape)} has "
                           f"{numel} elements; its storage size calculation overflowed")
    if dtype is not None and numel:
        from ._creation import empty
        try:
            probe = empty(tuple(int(d) for d in shape), dtype=dtype, device=device)
        except MemoryError:
            raise MemoryError(f"{op}: cannot allocate the output of shape "
                              f"{tuple(int(d) for d in shape)} ({numel * itemsize} bytes)"
                              ) from None
        del probe
    return numel


def _tensor_params(fn: Callable) -> "list[tuple[int | None, str, bool]]":
    """(position, name, None allowed) of the parameters `fn` annotates as Tensor or
    Optional[Tensor]."""
    import inspect
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    out = []
    for i, p in enumerate(params):
        ann = p.annotation if isinstance(p.annotation, str) \
            else getattr(p.annotation, "__name__", "")
        ann = ann.replace(" ", "")
        if ann == "Tensor":
            optional = False
        elif ann in ("Optional[Tensor]", "Tensor|None", "None|Tensor"):
            optional = True
        else:
            continue
        positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        out.append((i if positional else None, p.name, optional))
    return out


_TRANSPARENT_TENSOR_ARGS = False


def require_tensor_args(fn: Callable, name: str) -> Callable:
    """`fn` checking, before it runs, that each parameter annotated ``Tensor`` is a tensor
    (``Optional[Tensor]``: a tensor or None), raising PyTorch's TypeError
    ``name(): argument 'input' (position 1) must be Tensor, not str`` otherwise. Functions
    with no such parameter are returned unchanged."""
    checks = _tensor_params(fn)
    if not checks or getattr(fn, "__requires_tensor_args__", False):
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        n = len(args)  # (messages are formatted only on failure: this runs on every F call)
        for pos, pname, optional in checks:
            if pos is not None and pos < n:
                v = args[pos]
            elif pname in kwargs:
                v = kwargs[pname]
            else:
                continue
            if not isinstance(v, Tensor) and not (optional and v is None):
                where = (f"argument '{pname}' (position {pos + 1})"
                         if pos is not None and pos < n else f"argument '{pname}'")
                raise TypeError(f"{name}(): {where} must be Tensor"
                                f"{' or None' if optional else ''}, not {type(v).__name__}")
        return fn(*args, **kwargs)

    wrapper.__requires_tensor_args__ = True  # type: ignore[attr-defined]
    global _TRANSPARENT_TENSOR_ARGS
    if not _TRANSPARENT_TENSOR_ARGS:  # autocast's nesting check looks through it to the caller
        from .amp._policy import transparent
        transparent(wrapper)
        _TRANSPARENT_TENSOR_ARGS = True
    return wrapper
