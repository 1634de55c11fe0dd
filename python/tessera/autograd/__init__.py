"""tessera.autograd: reverse-mode automatic differentiation, PyTorch-style.

    x = ts.asarray([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()          # x.grad == 2 * x
"""
from __future__ import annotations

import traceback as _traceback
import typing as _t
import weakref as _weakref

if _t.TYPE_CHECKING:
    from .._C import Tensor
    from typing import Any, Optional

from .. import _C
from .._C import Tensor as _Tensor
from .function import Function, FunctionCtx
from .function import once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from . import functional
from . import graph
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "functional", "graph",
           "gradcheck", "gradgradcheck", "GradcheckError", "Variable"]

_Tensors = _t.Union[_Tensor, _t.Sequence[_Tensor]]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, _Tensor):
        return [x]
    return list(x)


def _default_grads(outputs: list, grads: list, create_graph: bool) -> list:
    from .._creation import ones_like
    if not grads:
        grads = [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"backward: got {len(outputs)} tensors and {len(grads)} gradients "
                           f"(grad_outputs needs one entry, a tensor or None, per output)")
    out = []
    for o, g in zip(outputs, grads):
        if g is None:
            if o.size != 1:
                raise RuntimeError(
                    f"backward: grad can be implicitly created only for scalar outputs, but the "
                    f"output has shape {o.shape}; hint: pass gradient= (a tensor of that shape), "
                    f"or reduce first, e.g. y.sum().backward()")
            if o.dtype in (_C.complex64, _C.complex128):
                raise RuntimeError(
                    f"backward: grad can be implicitly created only for real scalar outputs, but "
                    f"the output is {o.dtype}; hint: pass gradient= (e.g. a complex 1), or take "
                    f"a real part first, e.g. y.abs().backward()")
            g = ones_like(o)
        elif not isinstance(g, _Tensor):
            from .._creation import asarray
            g = asarray(g, dtype=o.dtype)
        if g.shape != o.shape:
            raise RuntimeError(f"backward: Mismatch in shape: grad_output[{len(out)}] has a shape "
                               f"of {tuple(g.shape)} and output[{len(out)}] has a shape of "
                               f"{tuple(o.shape)}")
        out.append(g)
    return out


def backward(tensors: _Tensors, grad_tensors: Optional[_Tensors] = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False,
             inputs: Optional[_Tensors] = None) -> None:
    """Accumulates d(tensors)/d(leaf) into each leaf's .grad (only `inputs`' when given)."""
    if inputs is not None and len(_as_list(inputs)) == 0:
        raise RuntimeError("backward: `inputs` argument to `backward()` cannot be empty.")
    outs = _as_list(tensors)
    grads = _default_grads(outs, _as_list(grad_tensors), create_graph)
    keep = create_graph if retain_graph is None else retain_graph
    ins = _as_list(inputs)
    for t in ins:  # like PyTorch: a non-leaf named in `inputs` gets its .grad filled
        if isinstance(t, _Tensor) and not t.is_leaf:
            t.retain_grad()
    _C._run_backward(outs, grads, ins, keep, create_graph, True, True)


def grad(outputs: _Tensors, inputs: _Tensors, grad_outputs: Optional[_Tensors] = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: Optional[bool] = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of `outputs` w.r.t. `inputs` (a tuple), without touching .grad.

    is_grads_batched=True: each grad_outputs tensor has an extra leading batch dimension and
    every result gets it too (one vector-Jacobian product per batch entry)."""
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if not ins:
        raise RuntimeError("grad: `inputs` argument to `grad()` cannot be empty.")
    if is_grads_batched:
        return _batched_grad(outs, ins, _as_list(grad_outputs), retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _default_grads(outs, _as_list(grad_outputs), create_graph)
    keep = create_graph if retain_graph is None else retain_graph
    res = _C._run_backward(outs, grads, ins, keep, create_graph, False,
                           bool(allow_unused) or materialize_grads)
    if materialize_grads:
        from .._creation import zeros_like
        res = [zeros_like(i) if r is None else r for r, i in zip(res, ins)]
    return tuple(res)


def _batched_grad(outs: list, ins: list, grads: list, retain_graph: Optional[bool],
                  create_graph: bool, allow_unused: Optional[bool],
                  materialize_grads: bool) -> tuple:
    """grad() once per entry of grad_outputs' leading (batch) dimension, results stacked."""
    from .._manipulation import stack
    if len(grads) != len(outs) or any(g is None for g in grads):
        raise RuntimeError("grad: is_grads_batched=True needs one batched grad_outputs tensor "
                           "per output")
    n = grads[0].shape[0] if grads[0].ndim else 0
    for g, o in zip(grads, outs):
        if g.ndim != o.ndim + 1 or tuple(g.shape[1:]) != tuple(o.shape) or g.shape[0] != n:
            raise RuntimeError(f"grad: If `is_grads_batched=True`, we interpret the first dimension "
                               f"of each grad_output as the batch dimension: grad_output of shape "
                               f"{tuple(g.shape)} does not match output of shape {tuple(o.shape)}")
    per_batch = []
    for b in range(n):
        keep = True if b < n - 1 else retain_graph
        per_batch.append(grad(outs, ins, [g[b] for g in grads], retain_graph=keep,
                              create_graph=create_graph, allow_unused=allow_unused,
                              materialize_grads=materialize_grads))
    res = []
    for k, i in enumerate(ins):
        col = [r[k] for r in per_batch]
        if n and all(c is None for c in col):
            res.append(None)
            continue
        from .._creation import zeros_like
        res.append(stack([zeros_like(i) if c is None else c for c in col]) if n else
                   _empty_batch(i))
    return tuple(res)


def _empty_batch(i: Tensor) -> Tensor:
    from .._creation import empty
    return empty((0,) + tuple(i.shape), dtype=i.dtype, device=i.device)


_anomaly_check_nan = True
_anomaly_mode = False  # the engine's flag is on only when check_nan is on too


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection (set_detect_anomaly / detect_anomaly) is on."""
    return _anomaly_mode or _C.is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode makes backward raise at the first NaN gradient."""
    return _anomaly_check_nan


def _set_anomaly(mode: bool, check_nan: bool) -> None:
    global _anomaly_check_nan, _anomaly_mode
    _anomaly_check_nan = bool(check_nan)
    _anomaly_mode = bool(mode)
    _C._set_anomaly_enabled(bool(mode) and bool(check_nan))


class detect_anomaly:
    """Context manager / decorator: backward raises at the first NaN gradient, naming the op
    ("Function 'DivBackward0' returned nan values in its 0th output") and its forward call site."""

    def __init__(self, check_nan: bool = True) -> None:
        import warnings
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self._prev = (is_anomaly_enabled(), _anomaly_check_nan)
        _set_anomaly(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _set_anomaly(*self._prev)

    def __call__(self, fn: Any) -> Any:
        import functools

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """set_detect_anomaly(mode, check_nan=True): sets anomaly mode now (a function call);
    as a context manager it restores the previous mode on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._prev = (is_anomaly_enabled(), _anomaly_check_nan)
        _set_anomaly(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _set_anomaly(*self._prev)


def _tensor_backward(self: Tensor, gradient: Any = None, retain_graph: Optional[bool] = None,
                     create_graph: bool = False, inputs: Optional[_Tensors] = None) -> None:
    """Computes the gradient of this tensor w.r.t. the graph's leaves (into their .grad)."""
    backward(self, gradient, retain_graph, create_graph, inputs)


class RemovableHandle:
    """Returned by Tensor.register_hook / register_post_accumulate_grad_hook: remove()
    unregisters the hook (also usable as a context manager)."""

    def __init__(self, remover: Any) -> None:
        self._remover = remover

    def remove(self) -> None:
        if self._remover is not None:
            self._remover()
            self._remover = None

    def __call__(self) -> None:  # older tessera code called the remover directly
        self.remove()

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


_c_register_hook = _Tensor.register_hook
_c_register_post_hook = _Tensor.register_post_accumulate_grad_hook


def _register_hook(self: Tensor, hook: Any) -> RemovableHandle:
    """hook(grad) runs when the gradient w.r.t. this tensor is computed; it may return a
    replacement gradient or None (keep it). Returns a handle with remove()."""
    name = getattr(hook, "__name__", type(hook).__name__)

    def checked(g: Tensor) -> Any:
        r = hook(g)
        if r is None:
            return None
        if not isinstance(r, _Tensor):
            raise TypeError(f"register_hook: hook '{name}' returned a {type(r).__name__}; "
                            f"expected a Tensor or None")
        if tuple(r.shape) != tuple(g.shape):
            raise RuntimeError(f"register_hook: hook '{name}' has changed the size of value "
                               f"(was {tuple(g.shape)}, got {tuple(r.shape)})")
        if r.dtype != g.dtype:
            raise RuntimeError(f"register_hook: hook '{name}' has changed the type of value "
                               f"(was {g.dtype} got {r.dtype})")
        return r
    return RemovableHandle(_c_register_hook(self, checked))


def _register_post_accumulate_grad_hook(self: Tensor, hook: Any) -> RemovableHandle:
    """hook(tensor) runs after backward has accumulated into this leaf's .grad (e.g. to step
    an optimizer per parameter). Returns a handle with remove()."""
    return RemovableHandle(_c_register_post_hook(self, hook))


_c_grad = _Tensor.grad  # the C++ property


def _get_grad(self: Tensor) -> Optional[Tensor]:
    """The gradient accumulated by backward (leaves, and non-leaves after retain_grad())."""
    if not self.is_leaf and not self.retains_grad:
        import warnings
        warnings.warn(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
            ".grad attribute won't be populated during autograd.backward(). If you indeed want "
            "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
            "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
            "the leaf Tensor instead.", UserWarning, stacklevel=2)
    g = _c_grad.fget(self)
    if g is None:
        return None
    # x.grad is x.grad: the Python object of the gradient is kept while it lives (a weak
    # reference; the key is in TRANSIENT_ATTRS, never copied, pickled or swapped)
    d = self.__dict__
    ref = d.get("_grad_ref")
    cached = ref() if ref is not None else None
    if cached is not None and cached._impl_id == g._impl_id:
        return cached
    d["_grad_ref"] = _weakref.ref(g)
    return g


def _set_grad(self: Tensor, value: Optional[Tensor]) -> None:
    if value is not None and isinstance(value, _Tensor):
        # torch raises RuntimeError for these (tessera's own errors would be Value/TypeError)
        if tuple(value.shape) != tuple(self.shape):
            raise RuntimeError(f"grad: attempting to assign a gradient of size "
                               f"'{list(value.shape)}' to a tensor of size '{list(self.shape)}'. "
                               f"Please ensure that the gradient and the tensor are the same size")
        if value.dtype != self.dtype:
            raise RuntimeError(f"grad: attempting to assign a gradient with dtype "
                               f"'{value.dtype}' to a tensor with dtype '{self.dtype}'. The "
                               f"gradient must match the tensor's dtype")
        if value.device != self.device:
            raise RuntimeError(f"grad: attempting to assign a gradient located on device "
                               f"'{value.device}' to a tensor located on device '{self.device}'. "
                               f"Please ensure that the gradient and the tensor are on the same "
                               f"device")
    _c_grad.fset(self, value)
    if value is None:
        self.__dict__.pop("_grad_ref", None)
    else:
        self.__dict__["_grad_ref"] = _weakref.ref(value)


def _del_grad(self: Tensor) -> None:
    _set_grad(self, None)


_c_node_register_hook = _C.Node.register_hook
_c_node_register_prehook = _C.Node.register_prehook


def _node_register_hook(self: Any, fn: Any) -> RemovableHandle:
    """fn(grad_inputs, grad_outputs) runs after this node computed the gradients w.r.t. its
    inputs; it may return replacements (a tuple, None entries allowed) or None."""
    return RemovableHandle(_c_node_register_hook(self, fn))


def _node_register_prehook(self: Any, fn: Any) -> RemovableHandle:
    """fn(grad_outputs) runs before this node; it may return replacement gradients or None."""
    return RemovableHandle(_c_node_register_prehook(self, fn))


