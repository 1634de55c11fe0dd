"""tessera.autograd: reverse-mode automatic differentiation, PyTorch-style.

    x = ts.asarray([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()          # x.grad == 2 * x
"""
from __future__ import annotations

import traceback
from typing import Any, Optional, Sequence, Union

from .. import _C
from .._C import Tensor
from .function import Function, FunctionCtx
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        no_grad, set_grad_enabled)
from . import functional

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "detect_anomaly",
           "set_detect_anomaly", "functional"]

_Tensors = Union[Tensor, Sequence[Tensor]]


def _as_list(x: Any) -> list:
    if x is None:
        return []
    if isinstance(x, Tensor):
        return [x]
    return list(x)


def _default_grads(outputs: list, grads: list, create_graph: bool) -> list:
    from .._creation import ones_like
    if not grads:
        grads = [None] * len(outputs)
    if len(grads) != len(outputs):
        raise ValueError(f"grad_outputs has {len(grads)} entries but there are {len(outputs)} outputs")
    out = []
    for o, g in zip(outputs, grads):
        if g is None:
            if o.size != 1:
                raise RuntimeError(
                    f"backward: grad can be implicitly created only for scalar outputs, but the "
                    f"output has shape {o.shape}; hint: pass gradient= (a tensor of that shape), "
                    f"or reduce first, e.g. y.sum().backward()")
            g = ones_like(o)
        elif not isinstance(g, Tensor):
            from .._creation import asarray
            g = asarray(g, dtype=o.dtype)
        if g.shape != o.shape:
            raise RuntimeError(f"backward: gradient has shape {g.shape} but the output has shape {o.shape}")
        out.append(g)
    return out


def backward(tensors: _Tensors, grad_tensors: Optional[_Tensors] = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False,
             inputs: Optional[_Tensors] = None) -> None:
    """Accumulates d(tensors)/d(leaf) into each leaf's .grad (only `inputs`' when given)."""
    outs = _as_list(tensors)
    grads = _default_grads(outs, _as_list(grad_tensors), create_graph)
    keep = create_graph if retain_graph is None else retain_graph
    _C._run_backward(outs, grads, _as_list(inputs), keep, create_graph, True, True)


def grad(outputs: _Tensors, inputs: _Tensors, grad_outputs: Optional[_Tensors] = None,
         retain_graph: Optional[bool] = None, create_graph: bool = False,
         allow_unused: Optional[bool] = None, materialize_grads: bool = False) -> tuple:
    """The gradients of `outputs` w.r.t. `inputs` (a tuple), without touching .grad."""
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    grads = _default_grads(outs, _as_list(grad_outputs), create_graph)
    keep = create_graph if retain_graph is None else retain_graph
    res = _C._run_backward(outs, grads, ins, keep, create_graph, False,
                           bool(allow_unused) or materialize_grads)
    if materialize_grads:
        from .._creation import zeros_like
        res = [zeros_like(i) if r is None else r for r, i in zip(res, ins)]
    return tuple(res)


class detect_anomaly:
    """Records where each op ran; backward raises at the first NaN/inf gradient, naming the
    op and that forward call site."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        self._prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        _C._set_anomaly_enabled(self._prev)


class set_detect_anomaly(detect_anomaly):
    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        super().__init__(check_nan and mode)
        self._prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(mode and check_nan)

    def __enter__(self) -> None:
        pass


def _tensor_backward(self: Tensor, gradient: Any = None, retain_graph: Optional[bool] = None,
                     create_graph: bool = False, inputs: Optional[_Tensors] = None) -> None:
    """Computes the gradient of this tensor w.r.t. the graph's leaves (into their .grad)."""
    backward(self, gradient, retain_graph, create_graph, inputs)


Tensor.backward = _tensor_backward
