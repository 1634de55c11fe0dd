"""PyTorch's function transforms and control flow, run eagerly: torch.compile (returns the
model or function itself), torch.vmap, torch.cond, torch.while_loop."""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional, Sequence

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


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: Optional[int] = None) -> Callable[..., Any]:
    """Vectorizes `func` over dimension `in_dims` of its tensor arguments by calling it once
    per slice and stacking the results along `out_dims` (torch.vmap's semantics, computed as
    a loop)."""
    def wrapped(*args: Any) -> Any:
        ts = _ts()
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap(...)(<inputs>): in_dims is not compatible with the structure "
                             f"of `inputs`. in_dims has structure {len(dims)} but inputs has "
                             f"structure {len(args)}.")
        sizes = {a.shape[d] for a, d in zip(args, dims) if isinstance(a, Tensor) and d is not None}
        if not sizes:
            raise ValueError("vmap(...): at least one input must be a Tensor mapped over a dim")
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                             f"dimension, got sizes {sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        results = []
        for i in builtins.range(n):
            call = [a.select(d, i) if isinstance(a, Tensor) and d is not None else a
                    for a, d in zip(args, dims)]
            results.append(func(*call))
        first = results[0]
        if isinstance(first, tuple):
            od = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
            return tuple(ts.stack([r[k] for r in results], axis=od[k])
                         for k in builtins.range(len(first)))
        return ts.stack([r if isinstance(r, Tensor) else ts.asarray(r) for r in results],
                        axis=out_dims)
    return wrapped


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
