"""jacobian, hessian, vjp, jvp, vhp, hvp over tessera.autograd.grad (torch.autograd.functional)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional, Sequence, Tuple

from .._C import Tensor

_In = _t.Union[Tensor, _t.Sequence[Tensor]]


def _tup(x: Any) -> Tuple[Any, ...]:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _prep(inputs: _In, create_graph: bool) -> Tuple[Tensor, ...]:
    return tuple(i.detach().requires_grad_(True) if not (create_graph and i.requires_grad) else i
                 for i in _tup(inputs))


def _check_strict(strict: bool, grads: Sequence[Any], op: str, out_index: int = 0) -> None:
    """strict=True: an output independent of an input is an error (as in torch)."""
    if strict:
        for k, g in enumerate(grads):
            if g is None:
                raise RuntimeError(f"{op}: Output {out_index} of the user-provided function is "
                                   f"independent of input {k}. This is not allowed in strict mode.")


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
    _check_strict(strict, gs, "vjp")
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
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian: for one input and one output, shape out.shape + in.shape (a tuple per
    input / output when those are tuples). vectorize only changes speed in torch; here rows
    are computed one by one either way. strategy must be "reverse-mode"."""
    if strategy != "reverse-mode":
        raise ValueError(f'jacobian: Expected strategy to be "reverse-mode" (tessera has no '
                         f'forward-mode AD), but got {strategy!r}')
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
            _check_strict(strict, gs, "jacobian", len(result))
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


def hessian(func: Callable, inputs: _In, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: shape in.shape + in.shape for one input."""
    from . import grad
    if outer_jacobian_strategy != "reverse-mode":
        raise ValueError(f'hessian: Expected outer_jacobian_strategy to be "reverse-mode" '
                         f'(tessera has no forward-mode AD), but got {outer_jacobian_strategy!r}')

    def first(*xs: Tensor) -> Any:
        gs = grad([func(*xs)], list(xs), create_graph=True, allow_unused=True)
        return gs[0] if isinstance(inputs, Tensor) else gs

    return jacobian(first, inputs, create_graph=create_graph, strict=strict)


def vhp(func: Callable, inputs: _In, v: Optional[_In] = None, create_graph: bool = False,
        strict: bool = False) -> Tuple[Any, Any]:
    """(func(inputs), v^T H) for a function returning a single-element tensor."""
    from . import grad
    from .._creation import zeros_like
    ins = _prep(inputs, True)
    out = func(*ins)
    if not isinstance(out, Tensor):
        raise RuntimeError("vhp: The function given in vhp should return a single Tensor")
    if out.size != 1:
        raise RuntimeError(f"vhp: The Tensor returned by the function given to vhp should contain "
                           f"a single element (got shape {tuple(out.shape)})")
    if v is None:
        if not all(i.size == 1 for i in ins):
            raise RuntimeError("vhp: The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single element.")
        from .._creation import ones_like
        v = tuple(ones_like(i) for i in ins)
    vs = _tup(v)
    if len(vs) != len(ins) or any(tuple(a.shape) != tuple(b.shape) for a, b in zip(vs, ins)):
        raise RuntimeError("vhp: v has to have the same structure and shapes as the inputs")
    gs = grad([out.reshape(())], list(ins), create_graph=True, allow_unused=True)
    _check_strict(strict, gs, "vhp")
    pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
    res = grad([g for g, _ in pairs], list(ins), [vv for _, vv in pairs],
               create_graph=create_graph, allow_unused=True) if pairs else (None,) * len(ins)
    _check_strict(strict, res, "vhp")
    res = tuple(zeros_like(i) if r is None else (r if create_graph else r.detach())
                for r, i in zip(res, ins))
    return out.detach(), (res[0] if isinstance(inputs, Tensor) else res)


def hvp(func: Callable, inputs: _In, v: Optional[_In] = None, create_graph: bool = False,
        strict: bool = False) -> Tuple[Any, Any]:
    """(func(inputs), H v): equal to vhp for the (symmetric) Hessian of a twice continuously
    differentiable function, so it is computed the same way."""
    return vhp(func, inputs, v, create_graph=create_graph, strict=strict)
