"""PyTorch's function transforms and control flow, run eagerly: torch.compile (returns the
model or function itself), torch.vmap, torch.cond, torch.while_loop."""
from __future__ import annotations

import builtins
from typing import Any, Callable, List, Optional, Sequence, Tuple

from ._C import Tensor

__all__ = ["vmap", "cond", "while_loop"]  # compile is served lazily (Python's builtin name)


def _ts() -> Any:
    import tessera
    return tessera


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,
            backend: Any = "inductor", mode: Any = None, options: Any = None,
            disable: bool = False) -> Any:
    """tessera has no compiler: returns `model` unchanged (or a decorator doing that)."""
    if model is None:
        return lambda fn: fn
    return model


def _flatten(tree: Any) -> Tuple[List[Any], Callable[[List[Any]], Any]]:
    """The leaves of a dict / list / tuple tree (tensors, or anything else at a leaf) and a
    function rebuilding the tree from new leaves (vmap's and torch.func's pytrees)."""
    if isinstance(tree, dict):
        keys: Optional[List[Any]] = list(tree)
        parts = [_flatten(tree[k]) for k in tree]
    elif isinstance(tree, (list, tuple)) and not isinstance(tree, Tensor):
        keys = None
        parts = [_flatten(v) for v in tree]
    else:
        return [tree], lambda leaves: leaves[0]
    counts = [len(p[0]) for p in parts]

    def rebuild(new: List[Any]) -> Any:
        out, at = [], 0
        for (_, unflat), n in zip(parts, counts):
            out.append(unflat(new[at:at + n]))
            at += n
        if keys is not None:
            return dict(zip(keys, out))
        if isinstance(tree, list):
            return out
        return type(tree)(*out) if hasattr(tree, "_fields") else tuple(out)
    return [t for p in parts for t in p[0]], rebuild


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: Optional[int] = None) -> Callable[..., Any]:
    """Vectorizes `func` over dimension `in_dims` of its tensor arguments by calling it once
    per slice and stacking the results along `out_dims` (torch.vmap's semantics, computed as
    a loop). Arguments and results may be dicts / lists / tuples of tensors (an in_dims entry
    applies to every tensor of its argument)."""
    def wrapped(*args: Any) -> Any:
        ts = _ts()
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(...)(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has structure {len(dims)} but inputs has "
                             f"structure {len(args)}.")
        flat = [_flatten(a) for a in args]
        sizes = {t.shape[d] for (leaves, _), d in zip(flat, dims) if d is not None
                 for t in leaves if isinstance(t, Tensor)}
        if not sizes:
            raise ValueError("vmap(...): at least one input must be a Tensor mapped over a dim")
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        results = []
        for i in builtins.range(n):
            call = [a if d is None else rebuild([t.select(d, i) if isinstance(t, Tensor) else t
                                                  for t in leaves])
                    for a, (leaves, rebuild), d in zip(args, flat, dims)]
            results.append(func(*call))
        first = results[0]
        if isinstance(first, tuple) and not isinstance(out_dims, int):
            od = tuple(out_dims)
        elif isinstance(first, tuple):
            od = (out_dims,) * len(first)
        else:
            od = None
        if od is not None:
            return tuple(_stack_tree([r[k] for r in results], od[k])
                         for k in builtins.range(len(first)))
        return _stack_tree(results, out_dims)
    return wrapped


def _stack_tree(results: List[Any], dim: int) -> Any:
    ts = _ts()
    leaves, rebuild = _flatten(results[0])
    per = [_flatten(r)[0] for r in results]
    return rebuild([ts.stack([p[k] if isinstance(p[k], Tensor) else ts.asarray(p[k])
                              for p in per], axis=dim) for k in builtins.range(len(leaves))])


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: Sequence[Any] = ()) -> Any:
    """Eager torch.cond: true_fn(*operands) if pred else false_fn(*operands)."""
    flag = bool(pred.item()) if isinstance(pred, Tensor) else bool(pred)
    return true_fn(*operands) if flag else false_fn(*operands)


def while_loop(cond_fn: Callable[..., Any], body_fn: Callable[..., Any],
               carried_inputs: Sequence[Any]) -> Any:
    """Eager torch.while_loop: repeats carried = body_fn(*carried) while cond_fn(*carried)."""
    carried = tuple(carried_inputs)
    while bool(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried
