"""DataParallel: PyTorch's single-process wrapper (state-dict keys under "module.").

tessera runs the wrapped module on one device, which is what PyTorch does with one or no GPU;
asked to split batches over several GPUs it raises and points to DistributedDataParallel (one
process per GPU), which PyTorch itself recommends over DataParallel."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional, Sequence

from ..modules.module import Module


def _index(d: Any) -> Any:
    return getattr(d, "index", d)


class DataParallel(Module):
    """Runs `module` on its device; checkpoints keep PyTorch's "module." key prefix.
    More than one entry in device_ids raises (use DistributedDataParallel)."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        ids = list(device_ids) if device_ids is not None else []
        if len({str(_index(d)) for d in ids}) > 1:
            raise RuntimeError(
                f"DataParallel: device_ids {ids} name several devices; tessera's "
                "DataParallel runs on one device. Use one process per GPU with "
                "tessera.nn.parallel.DistributedDataParallel (launched by "
                "`python -m tessera.distributed.run --nproc-per-node N script.py`), as "
                "PyTorch recommends.")
        self.module = module
        self.device_ids = ids
        self.output_device, self.dim = output_device, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
