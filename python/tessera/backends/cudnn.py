"""ts.backends.cudnn: torch.backends.cudnn's switches. tessera has no cuDNN, so
``is_available()`` is False and ``version()`` None; the switches (``benchmark``,
``deterministic``, ``enabled``, ``allow_tf32``, ``benchmark_limit``) are accepted and kept,
so training scripts that set them (``ts.backends.cudnn.benchmark = True``) run unchanged.
They do not change tessera's kernels: ``deterministic`` is torch's cuDNN-only switch (as in
torch, ``ts.use_deterministic_algorithms`` is the global one).
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

__all__ = ["is_available", "version", "is_acceptable", "set_flags", "flags", "enabled",
           "benchmark", "benchmark_limit", "deterministic", "allow_tf32"]

enabled: bool = True
benchmark: bool = False
deterministic: bool = False
allow_tf32: bool = True
benchmark_limit: Optional[int] = None  # torch's value where cuDNN is not available
fp32_precision: str = "none"


def is_available() -> bool:
    """Whether cuDNN can be used: never in tessera (its CUDA kernels are its own)."""
    return False


def version() -> Optional[int]:
    """cuDNN's version: None, as torch reports without cuDNN."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN would take `tensor`: False (no cuDNN)."""
    return False


def set_flags(_enabled: Any = None, _benchmark: Any = None, _benchmark_limit: Any = None,
              _deterministic: Any = None, _allow_tf32: Any = None,
              _fp32_precision: Any = "none") -> tuple:
    """Sets the given switches (None leaves one as it is); returns the previous values."""
    global enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision
    orig = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32, fp32_precision)
    if _enabled is not None:
        enabled = bool(_enabled)
    if _benchmark is not None:
        benchmark = bool(_benchmark)
    if _benchmark_limit is not None and is_available():
        benchmark_limit = int(_benchmark_limit)
    if _deterministic is not None:
        deterministic = bool(_deterministic)
    if _allow_tf32 is not None:
        allow_tf32 = bool(_allow_tf32)
    if _fp32_precision is not None:
        fp32_precision = str(_fp32_precision)
    return orig


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Iterator[None]:
    """Sets the switches within a ``with`` block (torch's defaults: all off but allow_tf32)
    and restores them after."""
    orig = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                     fp32_precision)
    try:
        yield
    finally:
        set_flags(*orig[:2], None, *orig[3:])
        globals()["benchmark_limit"] = orig[2]  # (set_flags skips it without cuDNN)
