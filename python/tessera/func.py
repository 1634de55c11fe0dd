"""torch.func: function transforms over tessera's autograd, computed eagerly — grad,
grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap (a loop: ts.vmap), functional_call
(nn.utils.stateless) and stack_module_state.

The differentiated arguments may be tensors or dicts / lists / tuples of tensors (a model's
parameters from ``dict(model.named_parameters())``); the results mirror their structure.
Transforms nest (``grad(grad(f))``, ``jacfwd(jacrev(f))``): an argument that already requires
grad keeps its graph, so the outer transform differentiates through the inner one.
jacfwd is computed in reverse mode (the same values as torch's forward mode).
"""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from ._C import Tensor
    from typing import Any, Callable, Dict, List, Sequence, Tuple

from ._C import Tensor as _Tensor
from ._transforms import _flatten, vmap
from .nn.utils.stateless import functional_call

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]

_ArgNums = _t.Union[int, _t.Tuple[int, ...]]


def _argnums(argnums: _ArgNums, nargs: int, op: str) -> Tuple[Tuple[int, ...], bool]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{op}(f, argnums): argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise RuntimeError(f"{op}(f, argnums={argnums}): got out of bounds argnum {n} for a "
                               f"function with {nargs} positional arguments")
    return tuple(n % nargs for n in nums), single


def _tracked(args: Sequence[Any], nums: Tuple[int, ...]) -> Tuple[List[Any], List[Tensor], bool,
                                                                     List[Callable]]:
    """The call's arguments with the differentiated ones as leaves that require grad (or kept
    as they are where they already do: a nested transform), their flat leaves, whether any was
    kept, and the rebuild function of each."""
    call = list(args)
    leaves: List[Tensor] = []
    rebuilds = []
    nested = False
    for i in nums:
        flat, rebuild = _flatten(args[i])
        new = []
        for t in flat:
            if not isinstance(t, _Tensor):
                raise TypeError(f"torch.func: the differentiated arguments must be tensors or "
                                f"dicts, lists or tuples of tensors, got {type(t).__name__}")
            if t.requires_grad:
                nested = True
                new.append(t)
            else:
                new.append(t.detach().requires_grad_(True))
        call[i] = rebuild(new)
        leaves += new
        rebuilds.append((rebuild, len(flat)))
    return call, leaves, nested, rebuilds


def _call(func: Callable, args: Sequence[Any], nums: Tuple[int, ...], has_aux: bool, op: str,
          kwargs: Any = None) -> Tuple[Any, Any, List[Tensor], bool, List[Any]]:
    """func called on the tracked arguments under grad mode: (output, aux, leaves, nested,
    rebuilds)."""
    from .autograd import enable_grad
    with enable_grad():
        call, leaves, nested, rebuilds = _tracked(args, nums)
        out = func(*call, **(kwargs or {}))
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(f"{op}(f)(*args): output of function f should be a tuple: "
                               f"(output, aux) if has_aux is True")
        out, aux = out
    return out, aux, leaves, nested, rebuilds


def _split(grads: Sequence[Any], rebuilds: List[Any], single: bool) -> Any:
    out, at = [], 0
    for rebuild, n in rebuilds:
        out.append(rebuild(list(grads[at:at + n])))
        at += n
    return out[0] if single else tuple(out)


def grad_and_value(func: Callable, argnums: _ArgNums = 0, has_aux: bool = False) -> Callable:
    """A function returning (the gradient of func's scalar output with respect to the
    arguments at argnums, the output) — ((grad, (output, aux)) with has_aux)."""
    from .autograd import enable_grad, grad as _grad
    from ._creation import zeros_like

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nums, single = _argnums(argnums, len(args), "grad_and_value")
        out, aux, leaves, nested, rebuilds = _call(func, args, nums, has_aux, "grad_and_value",
                                                   kwargs)
        with enable_grad():
            if not isinstance(out, _Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out).__name__}")
            if out.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.ndim} dims. Maybe you "
                                   f"wanted to use the vjp or jacrev APIs instead?")
            gs = _grad(out, leaves, create_graph=nested, allow_unused=True) \
                if out.requires_grad else [None] * len(leaves)
        gs = [zeros_like(t) if g is None else (g if nested else g.detach())
              for g, t in zip(gs, leaves)]
        value = out if nested else out.detach()
        g = _split(gs, rebuilds, single)
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapped


def grad(func: Callable, argnums: _ArgNums = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of func's scalar output with respect to the
    arguments at argnums ((grad, aux) with has_aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapped


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> Tuple[Any, ...]:
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives a tuple with the
    vector-Jacobian product for each primal."""
    from .autograd import enable_grad, grad as _grad
    from ._creation import zeros_like
    out, aux, leaves, nested, rebuilds = _call(func, primals, tuple(range(len(primals))),
                                               has_aux, "vjp")
    outs, _ = _flatten(out)

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool = False) -> Any:
        cts, _ = _flatten(cotangents)
        if len(cts) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents, got {len(cts)}")
        with enable_grad():
            gs = _grad(outs, leaves, cts, retain_graph=retain_graph,
                       create_graph=create_graph or nested, allow_unused=True)
        gs = [zeros_like(t) if g is None else g for g, t in zip(gs, leaves)]
        return _split(gs, rebuilds, False)
    value = out if nested else (_flatten(out)[1]([o.detach() for o in outs]))
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jvp(func: Callable, primals: Sequence[Any], tangents: Sequence[Any], *,
        has_aux: bool = False) -> Tuple[Any, ...]:
    """(func(*primals), the Jacobian-vector product with tangents[, aux])."""
    from .autograd import functional as _functional
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be "
                           "tuples")
    aux_box: List[Any] = []

    def f(*xs: Any) -> Any:
        out = func(*xs)
        if has_aux:
            out, aux = out
            aux_box.append(aux)
        return out
    out, jv = _functional.jvp(f, primals, tangents)
    return (out, jv, aux_box[0]) if has_aux else (out, jv)


def jacrev(func: Callable, argnums: _ArgNums = 0, *, has_aux: bool = False,
           chunk_size: Any = None) -> Callable:
    """A function returning the Jacobian of func with respect to the arguments at argnums
    (shape output.shape + input.shape; a tuple over argnums when argnums is a tuple)."""
    from .autograd import enable_grad, grad as _grad
    from ._creation import zeros_like
    from ._manipulation import stack

    def wrapped(*args: Any) -> Any:
        nums, single = _argnums(argnums, len(args), "jacrev")
        out, aux, leaves, nested, rebuilds = _call(func, args, nums, has_aux, "jacrev")
        with enable_grad():
            if not isinstance(out, _Tensor):
                raise RuntimeError(f"jacrev(f)(*args): Expected f(*args) to return a Tensor, "
                                   f"got {type(out).__name__}")
            rows = out.reshape(-1)
            per_row = []
            for k in range(rows.shape[0]):
                gs = _grad(rows[k], leaves, retain_graph=True, create_graph=nested,
                           allow_unused=True) if out.requires_grad else [None] * len(leaves)
                per_row.append([zeros_like(t) if g is None else g for g, t in zip(gs, leaves)])
        jacs = []
        for j, t in enumerate(leaves):
            col = stack([r[j] for r in per_row]) if per_row else zeros_like(t).reshape(0, *t.shape)
            col = col.reshape(*out.shape, *t.shape)
            jacs.append(col if nested else col.detach())
        result = _split(jacs, rebuilds, single)
        return (result, aux) if has_aux else result
    return wrapped


def jacfwd(func: Callable, argnums: _ArgNums = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian as jacrev computes it (torch's forward mode gives the same values)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func: Callable, argnums: _ArgNums = 0) -> Callable:
    """The Hessian of func's scalar output: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)


def stack_module_state(models: Sequence[Any]) -> Tuple[Dict[str, Tensor], Dict[str, Tensor]]:
    """(params, buffers): each name's tensors of the models stacked along a new leading dim
    (the stacked parameters are new leaves that require grad), for vmap over an ensemble."""
    from ._manipulation import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/"
                           "eval mode.")
    if len({type(m) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    names = [n for n, _ in models[0].named_parameters()]
    params = {n: stack([dict(m.named_parameters())[n].detach() for m in models])
              .requires_grad_(True) for n in names}
    bnames = [n for n, _ in models[0].named_buffers()]
    buffers = {n: stack([dict(m.named_buffers())[n] for m in models]) for n in bnames}
    return params, buffers
