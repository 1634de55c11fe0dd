"""ts.cuda: CUDA devices, streams and events; the caching allocator's statistics (memory.py)
and CUDA graphs (graphs.py).

Mirrors ``torch.cuda``. Every function works in a CPU-only build: ``is_available()`` is then
False, ``device_count()`` 0, and the rest raise a RuntimeError that says why.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Optional, Union

from .. import _C

_c = _C._cuda

OutOfMemoryError = _c.OutOfMemoryError
OutOfMemoryError.__module__ = "tessera.cuda"
OutOfMemoryError.__doc__ = ("Raised when CUDA memory runs out even after tessera released its "
                            "cache (a MemoryError).")

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "get_device_name", "get_device_properties", "Stream", "Event", "current_stream",
           "default_stream", "stream", "device", "OutOfMemoryError", "is_built",
           "manual_seed", "manual_seed_all", "is_current_stream_capturing",
           # the caching allocator (memory.py)
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_stats_as_nested_dict",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_snapshot",
           "memory_summary",
           # CUDA graphs (graphs.py)
           "CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables"]

DeviceLike = Union[None, int, str, _C.Device]


def is_built() -> bool:
    """True when this build of tessera contains the CUDA backend."""
    return _c.is_built()


def is_available() -> bool:
    """True when the CUDA backend is built and at least one GPU is present."""
    return _c.is_available()


def device_count() -> int:
    """The number of CUDA devices (0 without the backend or a GPU)."""
    return _c.device_count()


def current_device() -> int:
    """The index of the calling thread's current CUDA device."""
    return _c.current_device()


def set_device(device: DeviceLike) -> None:
    """Makes `device` (an index, "cuda:N" or ts.Device) the current CUDA device."""
    _c.set_device(device)


def _index(device: DeviceLike) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _C.Device(device)
    if d.type != "cuda":
        raise ValueError(f"expected a CUDA device, got {d}")
    return d.index


def synchronize(device: DeviceLike = None) -> None:
    """Waits until all work queued on `device` (default: the current one) has finished."""
    _c.synchronize(device)


def get_device_name(device: DeviceLike = None) -> str:
    return _c.get_device_name(device)


class _DeviceProperties:
    def __init__(self, name: str, props: Dict[str, int]) -> None:
        self.name = name
        for k, v in props.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: DeviceLike = None) -> _DeviceProperties:
    return _DeviceProperties(_c.get_device_name(device), _c.get_device_properties(device))


class Stream:
    """A CUDA stream (an ordered queue of work on one device).

    ``Stream()`` creates a new non-blocking stream on the current device; ``priority`` follows
    CUDA (lower is higher priority). ``Stream(stream_ptr=0)`` wraps the legacy default stream.
    """

    def __init__(self, device: DeviceLike = None, priority: int = 0, *, stream_ptr: Optional[int] = None) -> None:
        self.device_index = _index(device)
        self._owned = stream_ptr is None
        self.cuda_stream = _c.create_stream(self.device_index, priority) if self._owned else int(stream_ptr)

    @property
    def device(self) -> _C.Device:
        return _C.Device(f"cuda:{self.device_index}")

    def synchronize(self) -> None:
        _c.stream_synchronize(self.device_index, self.cuda_stream)

    def query(self) -> bool:
        """True when all work queued on this stream has completed."""
        return _c.stream_query(self.device_index, self.cuda_stream)

    def wait_event(self, event: "Event") -> None:
        event.wait(self)

    def wait_stream(self, other: "Stream") -> None:
        e = Event()
        e.record(other)
        e.wait(self)

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (
            other.cuda_stream, other.device_index)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<tessera.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"

    def __del__(self) -> None:
        if getattr(self, "_owned", False):
            try:
                _c.destroy_stream(self.device_index, self.cuda_stream)
            except Exception:
                pass


def current_stream(device: DeviceLike = None) -> Stream:
    """The calling thread's current stream on `device`."""
    i = _index(device)
    return Stream(i, stream_ptr=_c.current_stream(i))


def default_stream(device: DeviceLike = None) -> Stream:
    """The legacy default stream of `device` (what ops use unless a stream is set)."""
    return Stream(_index(device), stream_ptr=0)


@contextlib.contextmanager
def stream(s: Optional[Stream]) -> Iterator[Optional[Stream]]:
    """Within the block, ops on s's device are queued on `s`."""
    if s is None:
        yield s
        return
    prev = _c.current_stream(s.device_index)
    _c.set_current_stream(s.device_index, s.cuda_stream)
    try:
        yield s
    finally:
        _c.set_current_stream(s.device_index, prev)


@contextlib.contextmanager
def device(d: DeviceLike) -> Iterator[None]:
    """Within the block, `d` is the current CUDA device."""
    prev = current_device()
    set_device(d)
    try:
        yield
    finally:
        set_device(prev)


class Event:
    """A CUDA event: a marker in a stream to wait on or time with.

    ``enable_timing=True`` allows ``elapsed_time``; events are created lazily on the device of
    the stream they are first recorded on.
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self._handle: Optional[int] = None
        self._device: Optional[int] = None

    def _ensure(self, device_index: int) -> int:
        if self._handle is None:
            self._handle = _c.create_event(device_index, self.enable_timing)
            self._device = device_index
        return self._handle

    def record(self, stream: Optional[Stream] = None) -> None:
        stream = stream or current_stream()
        _c.record_event(self._ensure(stream.device_index), stream.device_index, stream.cuda_stream)

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Makes future work on `stream` (default: current) wait for this event."""
        stream = stream or current_stream()
        if self._handle is not None:
            _c.stream_wait_event(stream.device_index, stream.cuda_stream, self._handle)

    def query(self) -> bool:
        return True if self._handle is None else _c.event_query(self._handle)

    def synchronize(self) -> None:
        if self._handle is not None:
            _c.event_synchronize(self._handle)

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and `end_event` (both recorded and complete)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events need enable_timing=True")
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Event.elapsed_time: both events must be recorded first")
        return _c.event_elapsed_ms(self._handle, end_event._handle)

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            try:
                _c.destroy_event(self._handle)
            except Exception:
                pass


def is_current_stream_capturing() -> bool:
    """True while the calling thread's current CUDA stream is capturing a CUDA graph."""
    return _c.is_current_stream_capturing()


def manual_seed(seed: int) -> None:
    """Seeds the generator (one counter-based generator serves every device)."""
    from .. import random
    random.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every device (tessera has one for all of them)."""
    manual_seed(seed)


def seed() -> None:
    """Seeds the generator with a non-deterministic random number (torch.cuda.seed)."""
    from .. import random
    random.seed()


def seed_all() -> None:
    """As `seed` (one generator serves every device)."""
    seed()


def initial_seed() -> int:
    """The seed the generator was last seeded with."""
    from .. import random
    return random.initial_seed()


def get_rng_state(device: DeviceLike = "cuda") -> Any:
    """The generator's state as a uint8 CPU tensor (torch.cuda.get_rng_state). One
    counter-based generator serves every device, so this is also ts.get_rng_state()."""
    from .. import random
    return random.get_rng_state()


def get_rng_state_all() -> "list[Any]":
    """One state tensor per CUDA device (all the same generator's)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: Any, device: DeviceLike = "cuda") -> None:
    """Restores a state from `get_rng_state` (a uint8 CPU tensor)."""
    from .. import random
    random.set_rng_state(new_state)


def set_rng_state_all(new_states: Any) -> None:
    """Restores the states of `get_rng_state_all`, one per device."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def get_device_capability(device: DeviceLike = None) -> "tuple[int, int]":
    """(major, minor) compute capability of `device` (default: the current one)."""
    p = get_device_properties(device)
    return (p.major, p.minor)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True when a GPU is present that runs bfloat16 (compute capability 8.0 or newer; with
    `including_emulation`, any GPU, as torch)."""
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8


def is_tf32_supported() -> bool:
    """True when a GPU is present with TF32 tensor cores (compute capability 8.0 or newer)."""
    return is_available() and get_device_capability()[0] >= 8


def _install_amp() -> Any:
    """ts.cuda.amp (torch.cuda.amp's deprecated autocast / GradScaler), importable as
    ``tessera.cuda.amp`` too."""
    import sys
    from .._amp_legacy import cuda_amp
    sys.modules[__name__ + ".amp"] = cuda_amp
    return cuda_amp


amp = _install_amp()

from .memory import (empty_cache, max_memory_allocated, max_memory_reserved,  # noqa: E402
                     memory_allocated, memory_reserved, memory_snapshot, memory_stats,
                     memory_stats_as_nested_dict, memory_summary, reset_accumulated_memory_stats,
                     reset_peak_memory_stats)
from .graphs import CUDAGraph, graph, graph_pool_handle, make_graphed_callables  # noqa: E402
from . import tunable  # noqa: E402,F401
