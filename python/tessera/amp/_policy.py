"""The autocast entry hook of tessera's ops and their cast policies (PyTorch's lists).

An op on a list calls, first thing, ``x, w = _amp.cast(_amp.LOWER, x, w)``: when autocast
is off in this thread the C++ hook hands its arguments back after one thread-local check;
when on, it casts the eligible ones (floating, not float64, on a device type whose autocast
is enabled) with recorded, differentiable casts. One argument comes back as itself, several
as a tuple; non-tensors (None, numbers) pass through.

Each policy is a pair (CPU policy, CUDA policy), since PyTorch's CPU and CUDA lists differ.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Tuple

from .. import _C
from .._C import _autocast_cast as cast, _autocast_policies as _policies
# transparent(*fns): thin Tensor-method wrappers the float32-on-CUDA hooks' nesting check
# looks through (an op called from inside another op's implementation does not autocast).
from .._C import _autocast_transparent as transparent

__all__ = ["cast", "cast_bce", "op", "transparent", "LOWER", "FP32", "FP32_CUDA", "FP32_CPU", "PROMOTE_CUDA"]

LOWER: int = _policies["LOWER_LOWER"]          # to the autocast dtype on both device types
FP32: int = _policies["FP32_FP32"]             # to float32 on both
FP32_CUDA: int = _policies["NONE_FP32"]        # to float32 on CUDA only (CPU: untouched)
FP32_CPU: int = _policies["FP32_NONE"]         # to float32 on CPU only
PROMOTE_CUDA: int = _policies["NONE_PROMOTE"]  # to the widest input type on CUDA only


def cast_bce(input: Any, target: Any, weight: Any) -> Tuple[Any, Any, Any]:
    """binary_cross_entropy's hook: float32 on CPU; on CUDA PyTorch bans it under autocast
    (a sigmoid before it loses too much in float16), and so does tessera."""
    if _C._autocast_is_enabled("cuda") and isinstance(input, _C.Tensor) \
            and input.device.type == "cuda":
        raise RuntimeError(
            "binary_cross_entropy: unsafe to autocast on CUDA (a sigmoid right before it loses "
            "too much in float16); use binary_cross_entropy_with_logits / BCEWithLogitsLoss, "
            "which is safe to autocast, or disable autocast around it.")
    return cast(FP32_CPU, input, target, weight)


def op(policy: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator for an op whose body calls other ops on the lists: when autocast is on, it
    casts the op's tensor arguments per `policy` and runs the body with autocast off for the
    device types `policy` covers, as PyTorch's autocast wrappers do (they exclude the
    autocast key for the call). On a device type the policy leaves alone, the body's own ops
    autocast, as PyTorch's decompositions do (e.g. CPU bilinear: its inner products in the
    autocast dtype, a float32 result)."""
    covered = [d for i, d in enumerate(("cpu", "cuda")) if (policy >> (2 * i)) & 3]

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not _C._autocast_active():
                return fn(*args, **kwargs)
            keys = list(kwargs)
            values = (*args, *kwargs.values())
            if values:
                cast_values = cast(policy, *values)
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
