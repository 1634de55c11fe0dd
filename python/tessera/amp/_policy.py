"""The autocast entry hook of tessera's ops written in Python, and the policy table.

The table (op -> CPU policy, CUDA policy) lives in C++, in ``csrc/ops/autocast_policy.h``,
beside the ops that apply it at their entry; ``POLICIES`` is a read-only view of it. An op
written in Python calls, first thing, ``x, w = _amp.cast("group_norm", x, w)``: when
autocast is off in this thread the C++ hook hands its arguments back after one thread-local
check; when on, it casts the eligible ones (floating, not float64, on a device type whose
autocast is enabled) per the op's row, with recorded, differentiable casts. One argument comes
back as itself, several as a tuple; non-tensors (None, numbers) pass through.
``cast_dtype`` is the hook for a call given an explicit ``dtype=``.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, Tuple

from .. import _C
from .._C import _autocast_cast as cast, _autocast_cast_dtype as cast_dtype
# transparent(*fns): thin Tensor-method wrappers the float32-on-CUDA hooks' nesting check
# looks through (an op called from inside another op's implementation does not autocast).
from .._C import _autocast_transparent as transparent

__all__ = ["POLICIES", "cast", "cast_dtype", "op", "transparent"]

# op -> (cpu policy, cuda policy, opt_dtype); each policy 'lower', 'fp32', 'promote', 'none'.
POLICIES: "types.MappingProxyType[str, Tuple[str, str, bool]]" = types.MappingProxyType(
    _C._autocast_policy_table())


def op(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for an op whose body calls other ops in the table: when autocast is on, it
    casts the op's tensor arguments per `name`'s row and runs the body with autocast off for
    the device types the row covers, as PyTorch's autocast wrappers do (they exclude the
    autocast key for the call). On a device type the row leaves alone, the body's own ops
    autocast, as PyTorch's decompositions do (e.g. CPU bilinear: its inner products in the
    autocast dtype, a float32 result)."""
    cpu, cuda, _ = POLICIES[name]
    covered = [d for d, p in (("cpu", cpu), ("cuda", cuda)) if p != "none"]

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not _C._autocast_active():
                return fn(*args, **kwargs)
            keys = list(kwargs)
            values = (*args, *kwargs.values())
            if values:
                cast_values = cast(name, *values)
                values = cast_values if len(values) > 1 else (cast_values,)
            args, kwargs = values[:len(args)], dict(zip(keys, values[len(args):]))
            saved = [(d, _C._autocast_is_enabled(d)) for d in covered]
            for d, _ in saved:
                _C._autocast_set_enabled(d, False)
            try:
                return fn(*args, **kwargs)
            finally:
                for d, on in saved:
                    _C._autocast_set_enabled(d, on)
        return wrapper
    return deco
