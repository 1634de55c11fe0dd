"""jacobian, hessian, vjp, jvp over tessera.autograd.grad."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple, Union

from .._C import Tensor

_In = Union[Tensor, Sequence[Tensor]]


def _tup(x: Any) -> Tuple[Any, ...]:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prep(inputs: _In, create_graph: bool) -> Tuple[Tensor, ...]:
    return tuple(i.detach().requires_grad_(True) if not (create_graph and i.requires_grad) else i
                 for i in _tup(inputs))


def vjp(func: Callable, inputs: _In, v: Optional[_In] = None, create_graph: bool = False,
        strict: bool = False) -> Tuple[Any, Any]:
    """(func(inputs), v^T J): the vector-Jacobian product."""
    from . import grad
    from .._creation import zeros_like
    ins = _prep(inputs, create_graph)
    out = func(*ins)
    outs = _tup(out)
    vs = _tup(v) if v is not None else tuple(None for _ in outs)
    gs = grad(outs, ins, vs, create_graph=create_graph, allow_unused=True)
    gs = tuple(zeros_like(i) if g is None else g for g, i in zip(gs, ins))
    detached_out = out if create_graph else (out.detach() if isinstance(out, Tensor) else tuple(o.detach() for o in out))
    return detached_out, (gs[0] if isinstance(inputs, Tensor) else gs)


def jvp(func: Callable, inputs: _In, v: Optional[_In] = None, create_graph: bool = False,
        strict: bool = False) -> Tuple[Any, Any]:
    """(func(inputs), J v) via the double-vjp trick."""
    from . import grad
    from .._creation import zeros_like, ones_like
    ins = _prep(inputs, True)
    out = func(*ins)
    outs = _tup(out)
    us = tuple(zeros_like(o).requires_grad_(True) for o in outs)
    gs = grad(outs, ins, us, create_graph=True, allow_unused=True)
    vs = _tup(v) if v is not None else tuple(ones_like(i) for i in ins)
    pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
    jv = grad([g for g, _ in pairs], us, [vv for _, vv in pairs], create_graph=create_graph,
              allow_unused=True)
    jv = tuple(zeros_like(o) if j is None else j for j, o in zip(jv, outs))
    detached_out = out.detach() if isinstance(out, Tensor) else tuple(o.detach() for o in out)
    return detached_out, (jv[0] if isinstance(out, Tensor) else jv)


def jacobian(func: Callable, inputs: _In, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False) -> Any:
    """The Jacobian: for one input and one output, shape out.shape + in.shape."""
    from . import grad
    from .._creation import zeros, zeros_like
    from .._manipulation import stack, reshape
    ins = _prep(inputs, create_graph)
    out = func(*ins)
    outs = _tup(out)
    result = []
    for o in outs:
        flat_rows = [[] for _ in ins]
        for k in range(o.size):
            e = zeros(o.size, dtype=o.dtype, device=o.device)
            e[k] = 1
            gs = grad([o], ins, [reshape(e, o.shape)], retain_graph=True,
                      create_graph=create_graph, allow_unused=True)
            for j, (g, i) in enumerate(zip(gs, ins)):
                flat_rows[j].append(zeros_like(i) if g is None else g)
        per_in = []
        for rows, i in zip(flat_rows, ins):
            if rows:
                per_in.append(reshape(stack(rows), tuple(o.shape) + tuple(i.shape)))
            else:
                per_in.append(zeros(tuple(o.shape) + tuple(i.shape), dtype=i.dtype, device=i.device))
        result.append(per_in[0] if isinstance(inputs, Tensor) else tuple(per_in))
    return result[0] if isinstance(out, Tensor) else tuple(result)


def hessian(func: Callable, inputs: _In, create_graph: bool = False, strict: bool = False) -> Any:
    """The Hessian of a scalar function: shape in.shape + in.shape for one input."""
    from . import grad

    def first(*xs: Tensor) -> Any:
        gs = grad([func(*xs)], list(xs), create_graph=True, allow_unused=True)
        return gs[0] if isinstance(inputs, Tensor) else gs

    return jacobian(first, inputs, create_graph=create_graph)
