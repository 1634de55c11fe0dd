"""Activation checkpointing: recompute the forward during backward instead of saving it."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable

from .._C import Tensor
from ..autograd.function import Function, FunctionCtx
from ..autograd.grad_mode import enable_grad


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: FunctionCtx, fn: Callable, *args: Any) -> Any:  # type: ignore[override]
        ctx.fn = fn
        ctx.inputs = args
        return fn(*args)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor) -> Any:  # type: ignore[override]
        from ..autograd import grad
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.inputs]
        with enable_grad():
            out = ctx.fn(*inputs)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        diff = [i for i in inputs if isinstance(i, Tensor) and i.requires_grad]
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        gs = iter(grad([o for o, _ in pairs], diff, [g for _, g in pairs], allow_unused=True)) if diff and pairs else iter(())
        result = []
        for i in inputs:
            result.append(next(gs, None) if isinstance(i, Tensor) and i.requires_grad else None)
        return (None, *result)


def checkpoint(fn: Callable, *args: Any, use_reentrant: Any = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Runs fn(*args, **kwargs) without saving its intermediate tensors; backward runs it
    again. Takes torch's keywords; both use_reentrant settings recompute the same way here
    (RNG state is not replayed: ops drawing random numbers inside fn see fresh draws)."""
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not supported by tessera")
    if kwargs:
        return _Checkpoint.apply(lambda *a: fn(*a, **kwargs), *args)
    return _Checkpoint.apply(fn, *args)
