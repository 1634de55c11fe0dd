"""ts.accelerator: the device-neutral accelerator API of ``torch.accelerator``.

tessera's only accelerator is CUDA. ``current_accelerator()`` is ``Device("cuda")`` when this
build contains the CUDA backend (a compile-time answer, as PyTorch's) and ``None`` otherwise;
``is_available()`` adds the run-time check that a GPU is present. Without an accelerator every
call that needs a device raises PyTorch's RuntimeError ("Cannot access accelerator device when
none is available."), while ``is_available``, ``current_accelerator``, ``device_count`` and
``device_index(None)`` answer quietly, exactly as ``torch.accelerator`` on a CPU-only machine.
"""
from __future__ import annotations

import typing as _t
import warnings as _warnings
from collections import OrderedDict

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Optional

from . import _C
from . import cuda as _cuda

__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "set_stream", "synchronize"]

_DeviceLike = _t.Union[None, int, str, _C.Device]

_NONE_AVAILABLE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> Optional[_C.Device]:
    """The accelerator this build was compiled for (``Device("cuda")``) or None.

    With ``check_available=True`` it is also None when no GPU is present at run time.
    """
    if not _cuda.is_built():
        return None
    if check_available and not _cuda.is_available():
        return None
    return _C.Device("cuda")


def is_available() -> bool:
    """True when the accelerator is built and at least one device is visible."""
    return current_accelerator() is not None and _cuda.is_available()


def device_count() -> int:
    """The number of accelerator devices (0 when there is none)."""
    return _cuda.device_count() if current_accelerator() is not None else 0


def _require() -> None:
    if not is_available():
        raise RuntimeError(_NONE_AVAILABLE)


def _device_index(device: _DeviceLike, optional: bool) -> int:
    """PyTorch's ``_get_device_index``: an int passes through; a device must be the
    accelerator's type; a device without index means the current one (when optional)."""
    if isinstance(device, bool) or not isinstance(device, (int, str, _C.Device, type(None))):
        raise TypeError(f"accelerator: expected a device (int, str or tessera.Device), got "
                        f"{type(device).__name__}")
    if isinstance(device, int):
        return device
    index: Optional[int] = None
    if device is not None:
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        text = device if isinstance(device, str) else str(device)
        d = _C.Device(device)
        if d.type != acc.type:
            raise ValueError(f"{d.type} doesn't match the current accelerator {acc.type}.")
        index = d.index if ":" in text else None
    if index is None:
        if not optional:
            raise ValueError("Expected a tessera.Device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def current_device_index() -> int:
    """The index of the calling thread's current accelerator device."""
    _require()
    return _cuda.current_device()


def current_device_idx() -> int:
    """Deprecated alias of :func:`current_device_index` (a FutureWarning, as PyTorch)."""
    _warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device: _DeviceLike, /) -> None:
    """Makes `device` (an index, "cuda:N" or a Device with an index) the current device.

    A negative index is a no-op, as in PyTorch.
    """
    index = _device_index(device, optional=False)
    _require()
    if index >= 0:
        _cuda.set_device(index)


def set_device_idx(device: _DeviceLike, /) -> None:
    """Deprecated alias of :func:`set_device_index` (a FutureWarning, as PyTorch)."""
    _warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device: _DeviceLike = None, /) -> None:
    """Waits until all work queued on `device` (default: the current one) has finished."""
    index = _device_index(device, optional=True) if device is not None else None
    _require()
    _cuda.synchronize(index)


def current_stream(device: _DeviceLike = None, /) -> _cuda.Stream:
    """The current stream of `device` (default: the current device)."""
    index = _device_index(device, optional=True) if device is not None else None
    _require()
    return _cuda.current_stream(index)


def set_stream(stream: _cuda.Stream) -> None:
    """Makes `stream` current on its device and its device the current one."""
    if not isinstance(stream, _cuda.Stream):
        raise TypeError(f"set_stream: expected a tessera.cuda.Stream, got {type(stream).__name__}")
    _require()
    _cuda.set_device(stream.device_index)
    _C._cuda.set_current_stream(stream.device_index, stream.cuda_stream)


def get_device_capability(device: _DeviceLike = None, /) -> Dict[str, Any]:
    """``{"supported_dtypes": set of dtypes}``: the dtypes tensors can have on the device."""
    if device is not None:
        _device_index(device, optional=True)
    _require()
    from . import _dtypes
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
    return {"supported_dtypes": {getattr(_dtypes, n) for n in names}}


class device_index:
    """Context manager making device `device` (an int) current inside the block and
    restoring the previous one after; ``None`` switches nothing."""

    def __init__(self, device: Optional[int], /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            _require()
            self.prev_idx = _cuda.current_device()
            _cuda.set_device(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            _cuda.set_device(self.prev_idx)


# ---------------------------------------------------------------- memory (torch.accelerator.memory)
def empty_cache() -> None:
    """Returns the caching allocator's unused memory to the device driver."""
    _require()
    _cuda.empty_cache()


def empty_host_cache() -> None:
    """Releases cached pinned host memory (tessera caches none, so only the check remains)."""
    _require()


def memory_stats(device_index: _DeviceLike = None, /) -> "OrderedDict[str, Any]":
    """The caching allocator's counters for a device, PyTorch's flat key names."""
    index = _device_index(device_index, optional=True) if device_index is not None else None
    _require()
    return OrderedDict(sorted(_cuda.memory_stats(index).items()))


def memory_allocated(device_index: _DeviceLike = None, /) -> int:
    """Bytes held by live tensors on the device."""
    return int(memory_stats(device_index).get("allocated_bytes.all.current", 0))


def max_memory_allocated(device_index: _DeviceLike = None, /) -> int:
    """Peak of :func:`memory_allocated` since the start or the last reset."""
    return int(memory_stats(device_index).get("allocated_bytes.all.peak", 0))


def memory_reserved(device_index: _DeviceLike = None, /) -> int:
    """Bytes the caching allocator holds from the device (in use or cached)."""
    return int(memory_stats(device_index).get("reserved_bytes.all.current", 0))


def max_memory_reserved(device_index: _DeviceLike = None, /) -> int:
    """Peak of :func:`memory_reserved` since the start or the last reset."""
    return int(memory_stats(device_index).get("reserved_bytes.all.peak", 0))


def reset_peak_memory_stats(device_index: _DeviceLike = None, /) -> None:
    """Resets the peak counters of :func:`memory_stats`."""
    index = _device_index(device_index, optional=True) if device_index is not None else None
    _require()
    _cuda.reset_peak_memory_stats(index)


def reset_accumulated_memory_stats(device_index: _DeviceLike = None, /) -> None:
    """Zeroes the accumulated (``*.allocated`` / ``*.freed``) counters of :func:`memory_stats`."""
    index = _device_index(device_index, optional=True) if device_index is not None else None
    _require()
    _cuda.reset_accumulated_memory_stats(index)
