"""tessera.autograd.Function: user-defined ops with a Python forward and backward.

Both PyTorch styles work: `forward(ctx, *args)`, or `forward(*args)` plus a
`setup_context(ctx, inputs, output)` staticmethod (torch 2.x)."""
from __future__ import annotations

import functools as _functools
import inspect as _inspect
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List, Tuple

from .. import _C
from .._C import Tensor


class FunctionCtx:
    """The `ctx` passed to forward (or setup_context) and backward."""

    def __init__(self) -> None:
        self._to_save: Tuple[Any, ...] = ()
        self._saved: Tuple[Any, ...] = ()
        self._saved_released = False
        self._non_differentiable: Tuple[Tensor, ...] = ()
        self._dirty: Tuple[Tensor, ...] = ()
        self._materialize_grads = True
        self._out_meta: List[Any] = []
        self._out_is_tensor: Any = None  # per output of a tuple forward, when some aren't
        self.needs_input_grad: Tuple[bool, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward; they are version-checked on use."""
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> Tuple[Any, ...]:
        """The tensors given to save_for_backward (only valid inside backward)."""
        return self._saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that never get a gradient (e.g. indices): they don't require grad and
        backward receives zeros (or None without materialized grads) for them."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs that forward modified in place (and returns): they take this node as their
        grad_fn, as in PyTorch. A leaf that requires grad cannot be modified in place."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None (not a zero tensor) for outputs without a gradient."""
        self._materialize_grads = bool(value)


def _run_backward(cls: type, ctx: FunctionCtx, saved: Tuple[Any, ...], *grads: Any) -> Any:
    if ctx._materialize_grads:
        from .._creation import zeros
        grads = tuple(zeros(m[0], dtype=m[1], device=m[2]) if g is None else g
                      for g, m in zip(grads, ctx._out_meta))
    if ctx._out_is_tensor is not None:  # as torch: None for each non-tensor output of forward
        it = iter(grads)
        grads = tuple(next(it) if is_t else None for is_t in ctx._out_is_tensor)
    ctx._saved = saved
    try:
        return cls.backward(ctx, *grads)
    finally:
        ctx._saved = ()


def once_differentiable(fn: Callable) -> Callable:
    """Decorator for a Function's backward that is not itself differentiable: it runs under
    no_grad, so its results carry no history (double backward through it is not possible)."""
    @_functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            return fn(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
    return wrapper


def _node_name(cls: type) -> str:
    """grad_fn.name(): "<cls>Backward" as torch names custom Functions; tessera's own ops
    written as Functions (nn.functional's Relu, Softmax, ...) are numbered like torch's
    built-in nodes (ReluBackward0)."""
    own = cls.__module__.startswith("tessera.") and not cls.__name__.startswith("_")
    return f"{cls.__name__}Backward0" if own else f"{cls.__name__}Backward"


def _uses_setup_context(cls: type) -> bool:
    return getattr(cls, "setup_context", None) is not None and \
        cls.setup_context is not Function.setup_context  # type: ignore[attr-defined]


def _class_info(cls: type) -> Tuple[bool, str, Callable[..., Any]]:
    """(setup_context style, node name, backward callback) of a Function class, computed once
    per class (apply is on every fused op's hot path). Kept in the class's own __dict__ so a
    subclass computes its own."""
    info = cls.__dict__.get("_tessera_apply_info")
    if info is None:
        info = (_uses_setup_context(cls), _node_name(cls),
                lambda c, s, *g: _run_backward(cls, c, s, *g))
        setattr(cls, "_tessera_apply_info", info)
    return info


class Function:
    """Subclass with static `forward` and `backward(ctx, *grad_outputs)`, then call
    `MyFn.apply(*args)`. backward returns one gradient (or None) per forward argument."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Runs forward without recording, then records one node whose backward is cls.backward."""
        ctx = FunctionCtx()
        setup_style, node_name, run_backward = _class_info(cls)
        if setup_style:
            # As torch: keywords and defaults become positional, so setup_context's `inputs`
            # holds every forward argument.
            bound = _inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        tensor_args = [a if isinstance(a, Tensor) else None for a in args]
        ctx.needs_input_grad = needs = tuple([a is not None and a.requires_grad
                                              for a in tensor_args])
        prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)
        try:
            if setup_style:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        if not (prev and True in needs):
            return out
        outs = out if isinstance(out, tuple) else (out,)
        arg_ids = {id(a) for a in tensor_args if a is not None}
        fixed = []
        for o in outs:
            if isinstance(o, Tensor) and id(o) in arg_ids:
                if any(o is d for d in ctx._dirty):
                    if o.is_leaf and o.requires_grad:
                        raise RuntimeError(f"{cls.__name__}: a leaf Variable that requires grad "
                                           f"has been used in an in-place operation.")
                else:
                    # Returned as is: a fresh alias gets the history, the input keeps its own.
                    o = o.detach()
            fixed.append(o)
        tensor_outs = [o for o in fixed if isinstance(o, Tensor)]
        if len(tensor_outs) != len(fixed):
            ctx._out_is_tensor = tuple(isinstance(o, Tensor) for o in fixed)
        ctx._out_meta = [(o.shape, o.dtype, o.device) for o in tensor_outs]
        _C._make_function_node(cls.__name__, node_name, run_backward, ctx, tensor_args,
                               tensor_outs, ctx._to_save, ctx._non_differentiable)
        ctx._to_save = ()
        ctx._non_differentiable = ()  # no reference cycle through the node's ctx
        ctx._dirty = ()
        return tuple(fixed) if isinstance(out, tuple) else fixed[0]
