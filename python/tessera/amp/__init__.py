"""Automatic mixed precision: ts.amp.autocast (also ts.autocast) and ts.amp.GradScaler,
following torch.amp."""
from __future__ import annotations

from .autocast_mode import (autocast, clear_autocast_cache, custom_bwd,  # noqa: F401
                            custom_fwd, get_autocast_dtype, is_autocast_available,
                            is_autocast_cache_enabled, is_autocast_enabled, set_autocast_cache_enabled,
                            set_autocast_dtype, set_autocast_enabled)
from .grad_scaler import GradScaler, OptState  # noqa: F401

__all__ = ["autocast", "GradScaler", "OptState", "custom_fwd", "custom_bwd",
           "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache"]
