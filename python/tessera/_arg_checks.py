"""The argument checks that live in Python: each raises the final exception class itself, with
the op's name (no later step re-classes or re-words an error).

- :func:`int_arg`: an int argument of a Python-level op (TypeError for bools/floats, ValueError
  beyond int64);
- :func:`check_output_size`: an output's element count checked before building it;
- :func:`tensor_checks`: the (position, name, optional) of the parameters a function annotates
  ``Tensor``, which ``_C._tensor_method`` (Tensor methods) checks with PyTorch's TypeError.
"""
from __future__ import annotations

from typing import Any, Callable

from ._C import Tensor


def int_arg(op: str, name: str, value: Any) -> int:
    """``value`` as an int; TypeError naming ``op`` and ``name`` for bools, floats and the like,
    ValueError beyond int64."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    v = value.__index__()
    if not -(1 << 63) <= v < (1 << 63):
        raise ValueError(f"{op}: {name}={v} is out of range for a 64-bit integer")
    return v


def float_arg(op: str, name: str, value: Any) -> float:
    """``value`` as a float; TypeError naming ``op`` for a string or another non-number (as
    PyTorch: a string where a number belongs is a type error, not a bad value)."""
    if isinstance(value, (str, bytes)) or not (hasattr(value, "__float__")
                                               or hasattr(value, "__index__")):
        raise TypeError(f"{op}: expected a number, got {type(value).__name__} for {name}")
    return float(value)


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


def tensor_checks(fn: Callable) -> "list[tuple[int | None, str, bool]]":
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
