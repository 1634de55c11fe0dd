"""DataParallel: PyTorch's wrapper (state-dict keys under "module."). tessera runs the
wrapped module on one device, which is what PyTorch does with a single or no GPU."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from .module import Module


class DataParallel(Module):
    """Runs `module` on its device; checkpoints keep PyTorch's "module." key prefix."""

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device, self.dim = output_device, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
