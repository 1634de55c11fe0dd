"""Activation checkpointing: recompute the forward during backward instead of saving it."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List

from .._C import Tensor
from .._C._random import get_rng_state, set_rng_state
from ..autograd import backward as _backward
from ..autograd.function import Function, FunctionCtx
from ..autograd.grad_mode import enable_grad


class _Checkpoint(Function):
    """apply(fn, preserve_rng_state, n_inputs, *inputs, *params): fn(*inputs) without saving
    its intermediates. `params` (the parameters of a module fn) only make the output require
    grad when no input does; backward recomputes fn with the forward's RNG state and
    accumulates into the leaves fn reaches (its parameters) as PyTorch's reentrant checkpoint
    does, returning the inputs' gradients."""

    @staticmethod
    def forward(ctx: FunctionCtx, fn: Callable, preserve_rng_state: bool, n_inputs: int,
                *args: Any) -> Any:  # type: ignore[override]
        ctx.fn = fn
        ctx.inputs = args[:n_inputs]
        ctx.n_params = len(args) - n_inputs
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        return fn(*ctx.inputs)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor) -> Any:  # type: ignore[override]
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.inputs]
        state = None
        if ctx.rng_state is not None:  # dropout inside fn draws the forward's masks again
            state = get_rng_state()
            set_rng_state(ctx.rng_state)
        try:
            with enable_grad():
                out = ctx.fn(*inputs)
        finally:
            if state is not None:
                set_rng_state(state)
        outs = (out,) if isinstance(out, Tensor) else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            _backward([o for o, _ in pairs], [g for _, g in pairs])
        result: List[Any] = [i.grad if isinstance(i, Tensor) and i.requires_grad else None
                             for i in inputs]
        return (None, None, None, *result, *([None] * ctx.n_params))


def _module_params(fn: Any) -> list:
    """The parameters of the modules fn is, is bound to, or closes over (checkpoint(layer, x),
    checkpoint(layer.__call__, x), checkpoint(lambda h: layer(h) * s, x)), else none."""
    from ..nn.modules.module import Module
    owners = [fn, getattr(fn, "__self__", None), getattr(fn, "func", None)]
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            owners.append(cell.cell_contents)
        except ValueError:  # a cell not yet filled
            pass
    seen, params = set(), []
    for owner in owners:
        if isinstance(owner, Module):
            for p in owner.parameters():
                if p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    params.append(p)
    return params


def checkpoint(fn: Callable, *args: Any, use_reentrant: Any = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Runs fn(*args, **kwargs) without saving its intermediate tensors; backward runs it
    again, with the forward's RNG state when preserve_rng_state (so dropout draws the same
    masks), and accumulates the gradients of the parameters fn uses into their .grad. Takes
    torch's keywords; both use_reentrant settings recompute the same way here."""
    if context_fn is not None:
        raise NotImplementedError("checkpoint: context_fn is not supported by tessera")
    call = (lambda *a: fn(*a, **kwargs)) if kwargs else fn
    return _Checkpoint.apply(call, bool(preserve_rng_state), len(args), *args,
                             *_module_params(fn))
