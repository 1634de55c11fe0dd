"""tessera.autograd.Function: user-defined ops with a Python forward and backward."""
from __future__ import annotations

from typing import Any, Tuple

from .. import _C
from .._C import Tensor


class FunctionCtx:
    """The `ctx` passed to forward and backward."""

    def __init__(self) -> None:
        self._to_save: Tuple[Any, ...] = ()
        self._saved: Tuple[Any, ...] = ()
        self._non_differentiable: Tuple[Tensor, ...] = ()
        self.needs_input_grad: Tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward; they are version-checked on use."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward: expected tensors or None, got {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        return self._saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that never get a gradient (e.g. indices)."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Accepted for PyTorch compatibility; in-place outputs are tracked by version counters."""


def _run_backward(cls: type, ctx: FunctionCtx, saved: Tuple[Any, ...], *grads: Tensor) -> Any:
    ctx._saved = saved
    try:
        return cls.backward(ctx, *grads)
    finally:
        ctx._saved = ()


class Function:
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grad_outputs)`, then
    call `MyFn.apply(*args)`. backward returns one gradient (or None) per forward argument."""

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("subclasses of tessera.autograd.Function must define forward")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("subclasses of tessera.autograd.Function must define backward")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        ctx = FunctionCtx()
        tensor_args = [a if isinstance(a, Tensor) else None for a in args]
        ctx.needs_input_grad = tuple(a is not None and a.requires_grad for a in tensor_args)
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            out = cls.forward(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
        if not (prev and any(ctx.needs_input_grad)):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        tensor_outs = [o for o in outs if isinstance(o, Tensor)]
        # An output that is an input (returned as is) gets a fresh alias so history attaches to it.
        fixed = []
        for o in outs:
            if isinstance(o, Tensor) and any(o is a for a in args):
                o = o.detach()
            fixed.append(o)
        tensor_outs = [o for o in fixed if isinstance(o, Tensor)]
        _C._make_function_node(cls.__name__, lambda c, s, *g: _run_backward(cls, c, s, *g), ctx,
                               tensor_args, tensor_outs, ctx._to_save, ctx._non_differentiable)
        ctx._to_save = ()
        ctx._non_differentiable = ()  # no reference cycle through the node's ctx
        return tuple(fixed) if isinstance(out, tuple) else fixed[0]
