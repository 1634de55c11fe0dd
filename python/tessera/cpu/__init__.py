"""ts.cpu: torch.cpu's queries for the CPU device (always available) and ``ts.cpu.amp``."""
from __future__ import annotations

import contextlib as _contextlib
import sys as _sys
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Iterator

from .._amp_legacy import cpu_amp as amp

_sys.modules[__name__ + ".amp"] = amp

__all__ = ["is_available", "device_count", "current_device", "synchronize", "set_device",
           "stream", "current_stream", "amp"]


def is_available() -> bool:
    """Always True: tessera always has the CPU."""
    return True


def device_count() -> int:
    """1: the CPU counts as one device (torch.cpu.device_count)."""
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: Any) -> None:
    """A no-op (there is one CPU device), as torch.cpu.set_device."""


def synchronize(device: Any = None) -> None:
    """A no-op: CPU ops finish before they return."""


class Stream:
    """torch.cpu.Stream: a no-op stand-in (CPU work is synchronous)."""

    def __init__(self, priority: int = -1) -> None:
        self.priority = priority

    def wait_stream(self, stream: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass


_current = Stream()


def current_stream(device: Any = None) -> Stream:
    return _current


@_contextlib.contextmanager
def stream(stream: Any) -> Iterator[None]:
    """A no-op context (torch.cpu.stream)."""
    yield
