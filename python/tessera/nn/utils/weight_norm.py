"""weight_norm / remove_weight_norm (torch.nn.utils' hook-based API): the parameter `name`
is replaced by a magnitude `name_g` and a direction `name_v`, and recomputed before every
forward as v * g / ||v|| (norm over every dim but `dim`; dim=None or -1: the whole tensor,
as in PyTorch)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Tuple

from ..._C import Tensor
from ..parameter import Parameter


def _ts() -> Any:
    import tessera
    return tessera


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    t = _ts()
    if dim == -1:
        return t.sqrt(t.sum(v * v))
    axes = tuple(a for a in range(v.ndim) if a != dim)
    return t.sqrt(t.sum(v * v, axis=axes, keepdims=True)) if axes else t.abs(v)


class WeightNorm:
    """The forward pre-hook that recomputes `name` from `name_g` and `name_v`."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Any) -> Tensor:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def __call__(self, module: Any, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Any, name: str = "weight", dim: Optional[int] = 0) -> Any:
    """Reparametrizes module.`name` as g * v / ||v|| (keys name_g, name_v)."""
    t = _ts()
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"weight_norm: cannot register two weight_norm hooks on the same "
                               f"parameter {name}")
    weight = module._parameters.get(name)
    if weight is None:
        raise ValueError(f"weight_norm: module has no parameter {name!r}")
    if dim is None:
        dim = -1
    elif dim != -1:
        if not -weight.ndim <= dim < weight.ndim:
            raise ValueError(f"weight_norm: dim {dim} is out of range for a {weight.ndim}-D "
                             f"parameter")
        dim %= weight.ndim
    fn = WeightNorm(name, dim)
    with t.no_grad():
        g = _norm_except_dim(weight.detach(), dim)
    delattr(module, name)
    module.register_parameter(name + "_g", Parameter(g))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def _fold_back(module: Any, name: str, hook_type: type, compute: Any,
               parts: Tuple[str, ...], what: str) -> Any:
    """Replaces the reparametrization of `name` by `hook_type` with a plain parameter
    holding compute(hook, module), dropping the registered `parts` and the hook."""
    t = _ts()
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, hook_type) and hook.name == name:
            with t.no_grad():
                weight = compute(hook, module).detach()
            for part in parts:
                delattr(module, name + part)
            module.__dict__.pop(name, None)
            module.register_parameter(name, Parameter(weight))
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of {name!r} not found in {module}")


def remove_weight_norm(module: Any, name: str = "weight") -> Any:
    """Folds the reparametrization back into a plain parameter `name`."""
    return _fold_back(module, name, WeightNorm, lambda h, m: h.compute_weight(m), ("_g", "_v"),
                      "weight_norm")
