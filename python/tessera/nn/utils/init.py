"""torch.nn.utils.init: building a module without its initialization."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """Builds module_cls(*args, **kwargs) (tessera cannot skip the initialization, so the
    parameters are initialized as usual)."""
    from ..modules import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    kwargs.pop("device", None)
    return module_cls(*args, **kwargs)
