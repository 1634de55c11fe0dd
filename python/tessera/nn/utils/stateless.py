"""functional_call: run a module with some parameters/buffers replaced by given tensors
(torch.nn.utils.stateless / torch.func), e.g. for meta-learning or per-sample gradients."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional, Sequence, Tuple, Union


def _slot(module: Any, name: str) -> Tuple[Any, str, str]:
    """The submodule, the registry ('_parameters' or '_buffers') and the leaf name of a
    dotted state name."""
    *path, leaf = name.split(".")
    mod = module
    for p in path:
        if p not in mod._modules or mod._modules[p] is None:
            raise KeyError(f"functional_call: {name!r} names no submodule of "
                           f"{type(module).__name__}")
        mod = mod._modules[p]
    for table in ("_parameters", "_buffers"):
        if leaf in getattr(mod, table):
            return mod, table, leaf
    raise KeyError(f"functional_call: {name!r} is not a parameter or buffer of "
                   f"{type(module).__name__}")


def functional_call(module: Any, parameter_and_buffer_dicts: Union[Dict[str, Any],
                                                                   Sequence[Dict[str, Any]]],
                    args: Any = None, kwargs: Optional[Dict[str, Any]] = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """module(*args, **kwargs) with the named tensors swapped in for the call only; names are
    state-dict keys. strict=True requires every parameter and buffer to be given."""
    dicts = [parameter_and_buffer_dicts] if isinstance(parameter_and_buffer_dicts, dict) \
        else list(parameter_and_buffer_dicts)
    values: Dict[str, Any] = {}
    for d in dicts:
        for k, v in d.items():
            if k in values:
                raise ValueError(f"functional_call: {k!r} appeared in more than one dict")
            values[k] = v
    if strict:
        expected = set(dict(module.named_parameters())) | set(dict(module.named_buffers()))
        missing, unexpected = expected - set(values), set(values) - expected
        if missing or unexpected:
            raise RuntimeError(f"functional_call: missing keys {sorted(missing)}, unexpected "
                               f"keys {sorted(unexpected)}")
    saved = []
    try:
        for name, value in values.items():
            mod, table, leaf = _slot(module, name)
            registry = getattr(mod, table)
            saved.append((registry, leaf, registry[leaf]))
            registry[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for registry, leaf, old in reversed(saved):
            registry[leaf] = old
