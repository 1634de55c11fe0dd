"""torch's older per-device AMP spellings, deprecated in torch (FutureWarning) but common in
training scripts: ``torch.cuda.amp.autocast`` / ``GradScaler`` / ``custom_fwd`` /
``custom_bwd`` and ``torch.cpu.amp.autocast`` / ``GradScaler``; served here as
``ts.cuda.amp.*`` and ``ts.cpu.amp.*``, thin subclasses of ts.amp's with the device fixed.
"""
from __future__ import annotations

import functools
import types
import warnings
from typing import Any, Optional

from .amp import autocast_mode as _autocast_mode
from .amp.autocast_mode import autocast as _autocast
from .amp.grad_scaler import GradScaler as _GradScaler


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}args...)` instead.",
                  FutureWarning, stacklevel=3)


def _make(device: str, default_dtype_name: str) -> types.ModuleType:
    mod = types.ModuleType(f"tessera.{device}.amp",
                           f"ts.{device}.amp: torch.{device}.amp's deprecated aliases of ts.amp "
                           f"with device_type='{device}' (they warn FutureWarning, as torch).")

    class autocast(_autocast):
        __doc__ = (f"torch.{device}.amp.autocast: ts.amp.autocast('{device}', ...) "
                   f"(deprecated in torch; warns FutureWarning).")

        def __init__(self, enabled: bool = True, dtype: Any = None,
                     cache_enabled: bool = True) -> None:
            _deprecated(f"ts.{device}.amp.autocast", f"ts.amp.autocast('{device}', ")
            if dtype is None:
                from . import _dtypes
                dtype = getattr(_dtypes, default_dtype_name)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        __doc__ = (f"torch.{device}.amp.GradScaler: ts.amp.GradScaler('{device}', ...) "
                   f"(deprecated in torch; warns FutureWarning).")

        def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000,
                     enabled: bool = True) -> None:
            _deprecated(f"ts.{device}.amp.GradScaler", f"ts.amp.GradScaler('{device}', ")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    for cls in (autocast, GradScaler):
        cls.__module__ = mod.__name__
        cls.__qualname__ = cls.__name__
    mod.autocast, mod.GradScaler = autocast, GradScaler
    mod.__all__ = ["autocast", "GradScaler"]
    if device == "cuda":
        def custom_fwd(fwd: Any = None, *, cast_inputs: Optional[Any] = None) -> Any:
            """torch.cuda.amp.custom_fwd: ts.amp.custom_fwd(device_type='cuda')."""
            _deprecated("ts.cuda.amp.custom_fwd", "ts.amp.custom_fwd(device_type='cuda', ")
            return _autocast_mode.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)

        def custom_bwd(bwd: Any = None) -> Any:
            """torch.cuda.amp.custom_bwd: ts.amp.custom_bwd(device_type='cuda')."""
            _deprecated("ts.cuda.amp.custom_bwd", "ts.amp.custom_bwd(device_type='cuda', ")
            return _autocast_mode.custom_bwd(bwd, device_type="cuda")
        mod.custom_fwd, mod.custom_bwd = custom_fwd, custom_bwd
        mod.__all__ += ["custom_fwd", "custom_bwd"]
    return mod


cuda_amp = _make("cuda", "float16")
cpu_amp = _make("cpu", "bfloat16")
del functools
