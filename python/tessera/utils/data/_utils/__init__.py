"""PyTorch's private layout, for code that imports from it:
``tessera.utils.data._utils.collate.default_collate`` (and ``.worker``, ``.fetch``) name the
same modules as ``tessera.utils.data.collate`` and friends."""
import sys

from .. import collate, fetch, worker

for _module in (collate, fetch, worker):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module

__all__ = ["collate", "fetch", "worker"]
