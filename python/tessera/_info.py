"""__array_namespace_info__(): what this namespace supports (the array API inspection API)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from . import _C
from ._dtypes import _KINDS, bool as bool_, float32, float64, complex64, complex128, int64


class Info:
    """Capabilities, default device, default dtypes, devices and dtypes of tessera."""

    __module__ = "tessera"

    def capabilities(self) -> Dict[str, Any]:
        # Boolean masks index (x[mask]) and nonzero/unique_* have data-dependent shapes.
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self) -> _C.Device:
        return _C._get_default_device()

    def devices(self) -> List[_C.Device]:
        from . import _C as c
        devs = [c.Device("cpu")]
        devs += [c.Device(f"cuda:{i}") for i in range(c._cuda.device_count())]
        return devs

    def default_dtypes(self, *, device: Optional[Any] = None) -> Dict[str, Any]:
        return {"real floating": float32, "complex floating": complex64, "integral": int64,
                "indexing": int64}

    def dtypes(self, *, device: Optional[Any] = None, kind: Any = None) -> Dict[str, Any]:
        from ._dtypes import _ALL, float16, bfloat16, isdtype
        # Only the standard's dtypes: float16/bfloat16 are extras its consumers don't know.
        std = [d for d in _ALL if d not in (float16, bfloat16)]
        if kind is None:
            return {d.name: d for d in std}
        return {d.name: d for d in std if isdtype(d, kind)}
