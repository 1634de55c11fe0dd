"""DLPack exchange: from_dlpack and the Tensor's __dlpack__ / __dlpack_device__."""
from __future__ import annotations

__all__: list = []
