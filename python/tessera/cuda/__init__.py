"""ts.cuda: CUDA devices, streams and events; the caching allocator's statistics (memory.py)
and CUDA graphs (graphs.py).

Mirrors ``torch.cuda``, and without CUDA answers as torch's does: ``is_available()`` and
``is_initialized()`` are then False, ``device_count()`` 0, ``get_arch_list()`` [], the memory
statistics empty (0 bytes); ``init``, ``mem_get_info`` and the memory-fraction functions raise
torch's AssertionError in a build without the CUDA backend; the rest raise a RuntimeError that
says why.
"""
from __future__ import annotations

import contextlib as _contextlib
import typing as _t

from .. import _C

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterator, List, Optional, Tuple

_c = _C._cuda

OutOfMemoryError = _c.OutOfMemoryError
OutOfMemoryError.__module__ = "tessera.cuda"
OutOfMemoryError.__doc__ = ("Raised when CUDA memory runs out even after tessera released its "
                            "cache (a MemoryError).")

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "get_device_name", "get_device_properties", "Stream", "Event", "current_stream",
           "default_stream", "stream", "device", "OutOfMemoryError", "is_built",
           "manual_seed", "manual_seed_all", "is_current_stream_capturing", "seed", "seed_all",
           "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "get_device_capability", "is_bf16_supported",
           "is_tf32_supported", "amp",
           # the caching allocator (memory.py)
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_stats_as_nested_dict",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "memory_snapshot",
           "memory_summary",
           # CUDA graphs (graphs.py)
           "CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables",
           # torch.cuda's other commonly used names
           "init", "is_initialized", "get_arch_list", "get_gencode_flags", "mem_get_info",
           "default_generators", "ipc_collect", "set_per_process_memory_fraction",
           "get_per_process_memory_fraction", "StreamContext",
           "set_stream", "device_of", "nvtx", "memory_cached", "max_memory_cached",
           "reset_max_memory_allocated", "reset_max_memory_cached"]

_DeviceLike = _t.Union[None, int, str, _C.Device]


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


def set_device(device: _DeviceLike) -> None:
    """Makes `device` (an index, "cuda:N" or ts.Device) the current CUDA device."""
    _c.set_device(device)


def _index(device: _DeviceLike) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _C.Device(device)
    if d.type != "cuda":
        raise ValueError(f"expected a CUDA device, got {d}")
    return d.index


def synchronize(device: _DeviceLike = None) -> None:
    """Waits until all work queued on `device` (default: the current one) has finished."""
    _c.synchronize(device)


def get_device_name(device: _DeviceLike = None) -> str:
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


def get_device_properties(device: _DeviceLike = None) -> _DeviceProperties:
    return _DeviceProperties(_c.get_device_name(device), _c.get_device_properties(device))


class Stream:
    """A CUDA stream (an ordered queue of work on one device).

    ``Stream()`` creates a new non-blocking stream on the current device; ``priority`` follows
    CUDA (lower is higher priority). ``Stream(stream_ptr=0)`` wraps the legacy default stream.
    """

    def __init__(self, device: _DeviceLike = None, priority: int = 0, *, stream_ptr: Optional[int] = None) -> None:
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


def current_stream(device: _DeviceLike = None) -> Stream:
    """The calling thread's current stream on `device`."""
    i = _index(device)
    return Stream(i, stream_ptr=_c.current_stream(i))


def default_stream(device: _DeviceLike = None) -> Stream:
    """The legacy default stream of `device` (what ops use unless a stream is set)."""
    return Stream(_index(device), stream_ptr=0)


class StreamContext:
    """Within the block, ops on the device of `stream` are queued on it (torch.cuda.StreamContext;
    None: the block changes nothing)."""

    def __init__(self, stream: Optional[Stream]) -> None:
        self.stream = stream
        self._prev: Optional[int] = None

    def __enter__(self) -> Optional[Stream]:
        s = self.stream
        if s is not None:
            self._prev = _c.current_stream(s.device_index)
            _c.set_current_stream(s.device_index, s.cuda_stream)
        return s

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.stream is not None and self._prev is not None:
            _c.set_current_stream(self.stream.device_index, self._prev)
            self._prev = None


def stream(stream: Optional[Stream]) -> StreamContext:
    """Within the block, ops on the device of `stream` are queued on it (None: no change)."""
    return StreamContext(stream)


def set_stream(stream: Optional[Stream]) -> None:
    """Makes `stream` the current stream of its device (None: no change)."""
    if stream is not None:
        _c.set_current_stream(stream.device_index, stream.cuda_stream)


@_contextlib.contextmanager
def device(device: _DeviceLike) -> Iterator[None]:
    """Within the block, `device` is the current CUDA device (None or -1: no change, as torch)."""
    if device is None or (isinstance(device, int) and device < 0):
        yield
        return
    prev = current_device()
    set_device(device)
    try:
        yield
    finally:
        set_device(prev)


def device_of(obj: Any) -> _t.ContextManager[None]:
    """Within the block, the device of tensor `obj` is the current CUDA device (a CPU tensor:
    no change)."""
    return device(obj.device.index if obj.device.type == "cuda" else None)


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


def get_rng_state(device: _DeviceLike = "cuda") -> Any:
    """The generator's state as a uint8 CPU tensor (torch.cuda.get_rng_state). One
    counter-based generator serves every device, so this is also ts.get_rng_state()."""
    from .. import random
    return random.get_rng_state()


def get_rng_state_all() -> "list[Any]":
    """One state tensor per CUDA device (all the same generator's)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: Any, device: _DeviceLike = "cuda") -> None:
    """Restores a state from `get_rng_state` (a uint8 CPU tensor)."""
    from .. import random
    random.set_rng_state(new_state)


def set_rng_state_all(new_states: Any) -> None:
    """Restores the states of `get_rng_state_all`, one per device."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def get_device_capability(device: _DeviceLike = None) -> "tuple[int, int]":
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


def _lazy_init(what: str) -> None:
    """Raises what torch.cuda raises where CUDA cannot be used: AssertionError in a build
    without the CUDA backend (torch's "not compiled with CUDA enabled"), RuntimeError where no
    GPU is found."""
    if not _c.is_built():
        raise AssertionError(f"cuda.{what}: tessera not compiled with CUDA enabled (this build has "
                             "no CUDA backend; rebuild with -DTESSERA_CUDA=ON)")
    if not _c.is_available():
        raise RuntimeError(f"cuda.{what}: CUDA is not available: no CUDA device was found (the "
                           "CUDA backend is built, but the driver reports no GPU)")


def init() -> None:
    """Makes sure CUDA can be used (torch.cuda.init): tessera sets CUDA up when it loads, so
    this only raises where it cannot be."""
    _lazy_init("init")


def is_initialized() -> bool:
    """True when CUDA is set up for use: tessera does that when it loads, so this is
    is_available() (False without a GPU, as torch's)."""
    return _c.is_available()


def get_arch_list() -> List[str]:
    """The GPU architectures this build has kernels for ("sm_80", ...); [] without a GPU."""
    return list(_c.get_arch_list())


def get_gencode_flags() -> str:
    """nvcc's -gencode flags for get_arch_list() (torch.cuda.get_gencode_flags); "" without a
    GPU."""
    return " ".join(f"-gencode compute=compute_{arch},code={kind}_{arch}"
                    for kind, arch in (a.split("_") for a in get_arch_list()))


def mem_get_info(device: _DeviceLike = None) -> Tuple[int, int]:
    """(free, total) bytes of the device's memory, as the driver reports them (cudaMemGetInfo:
    memory other processes use counts as taken)."""
    if device is not None:
        _index(device)  # a CPU device is a ValueError, as torch's
    _lazy_init("mem_get_info")
    free, total = _c.mem_get_info(device)
    return (free, total)


def set_per_process_memory_fraction(fraction: float, device: _DeviceLike = None) -> None:
    """Caps the caching allocator's reserved memory on `device` at fraction * its total memory;
    an allocation beyond it releases the cache, then raises OutOfMemoryError."""
    _lazy_init("set_per_process_memory_fraction")
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _c.set_memory_fraction(fraction, device)


def get_per_process_memory_fraction(device: _DeviceLike = None) -> float:
    """The fraction set_per_process_memory_fraction set for `device` (1.0: no cap)."""
    _lazy_init("get_per_process_memory_fraction")
    return _c.memory_fraction(device)


def ipc_collect() -> None:
    """Frees CUDA memory held for tensors shared with other processes (torch.cuda.ipc_collect):
    tessera shares no CUDA memory between processes, so there is none to free."""
    _lazy_init("ipc_collect")


def _install_amp() -> Any:
    """ts.cuda.amp (torch.cuda.amp's deprecated autocast / GradScaler), importable as
    ``tessera.cuda.amp`` too."""
    import sys
    from .._amp_legacy import cuda_amp
    sys.modules[__name__ + ".amp"] = cuda_amp
    return cuda_amp


amp = _install_amp()

# one generator serves every device (ts.cuda.manual_seed): torch's tuple of one per device
from ..random import default_generator as _default_generator  # noqa: E402
default_generators: "Tuple[Any, ...]" = tuple(_default_generator for _ in range(device_count()))

from . import nvtx  # noqa: E402
from .memory import (empty_cache, max_memory_allocated, max_memory_cached,  # noqa: E402
                     max_memory_reserved, memory_allocated, memory_cached, memory_reserved,
                     memory_snapshot, memory_stats, memory_stats_as_nested_dict, memory_summary,
                     reset_accumulated_memory_stats, reset_max_memory_allocated,
                     reset_max_memory_cached, reset_peak_memory_stats)
from .graphs import CUDAGraph, graph, graph_pool_handle, make_graphed_callables  # noqa: E402
from . import tunable  # noqa: E402,F401
