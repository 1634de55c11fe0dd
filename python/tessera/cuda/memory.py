"""The caching allocator's statistics and snapshots (``torch.cuda.memory``'s functions).

The counters (Note [Allocator statistics] in csrc/cuda/caching_allocator.h) carry PyTorch's
key names: for each of ``allocated_bytes``, ``requested_bytes``, ``active_bytes``,
``inactive_split_bytes``, ``reserved_bytes`` and the counts ``allocation``, ``active``,
``inactive_split``, ``segment``, the keys ``<stat>.<pool>.<kind>`` with pool in
``all | small_pool | large_pool`` and kind in ``current | peak | allocated | freed``; plus
``num_alloc_retries``, ``num_ooms``, ``num_device_alloc``, ``num_device_free``.
"""
from __future__ import annotations

import collections as _collections
import typing as _t
import warnings as _warnings

from .. import _C

if _t.TYPE_CHECKING:
    from typing import Any, Dict, List

_c = _C._cuda

_DeviceLike = _t.Union[None, int, str, _C.Device]

__all__ = ["memory_stats", "memory_stats_as_nested_dict", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache",
           "memory_snapshot", "memory_summary", "memory_cached", "max_memory_cached",
           "reset_max_memory_allocated", "reset_max_memory_cached"]


def memory_stats(device: _DeviceLike = None) -> Dict[str, int]:
    """The caching allocator's counters for `device` (default: the current one), PyTorch's key
    names in sorted order (an OrderedDict, as torch.cuda.memory_stats returns). Empty where
    CUDA is not available, as torch's (which has no counters before CUDA is initialized)."""
    if not _c.is_available():
        return _collections.OrderedDict()
    return _collections.OrderedDict(sorted(_c.memory_stats(device).items()))


def memory_stats_as_nested_dict(device: _DeviceLike = None) -> Dict[str, Any]:
    """memory_stats() as nested dicts: ``d["allocated_bytes"]["all"]["current"]``."""
    out: Dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


def memory_allocated(device: _DeviceLike = None) -> int:
    """Bytes held by live tensors on `device` (block sizes, rounded up to 512 bytes); 0 where
    CUDA is not available, as torch's."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: _DeviceLike = None) -> int:
    """Peak of :func:`memory_allocated` since the start or the last reset_peak_memory_stats."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: _DeviceLike = None) -> int:
    """Bytes the caching allocator holds from CUDA (in use or cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: _DeviceLike = None) -> int:
    """Peak of :func:`memory_reserved` since the start or the last reset_peak_memory_stats."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    """Sets every ``*.peak`` counter to its current value."""
    _c.reset_peak_memory_stats(device)


def memory_cached(device: _DeviceLike = None) -> int:
    """Deprecated: memory_reserved (torch.cuda.memory_cached's FutureWarning)."""
    _warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                   FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device: _DeviceLike = None) -> int:
    """Deprecated: max_memory_reserved (torch.cuda.max_memory_cached's FutureWarning)."""
    _warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                   "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_max_memory_allocated(device: _DeviceLike = None) -> None:
    """Deprecated: reset_peak_memory_stats, which resets every peak (torch's FutureWarning)."""
    _warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                   "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                   FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: _DeviceLike = None) -> None:
    """Deprecated: reset_peak_memory_stats, which resets every peak (torch's FutureWarning)."""
    _warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                   "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                   FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    """Zeroes every ``*.allocated`` / ``*.freed`` counter and the retry / OOM counts."""
    _c.reset_accumulated_memory_stats(device)


def empty_cache() -> None:
    """Returns the cached, unused device memory to CUDA (other libraries can then use it).
    Memory held by live tensors, and by CUDA graphs' private pools, stays."""
    _c.empty_cache()


def memory_snapshot() -> List[Dict[str, Any]]:
    """Every segment the caching allocator holds, on every device, as PyTorch's dicts:
    ``device``, ``address``, ``total_size``, ``allocated_size``, ``active_size``,
    ``requested_size``, ``stream``, ``segment_type`` ("small" | "large"), ``segment_pool_id``
    (``(0, 0)`` for the device's own pool, else a CUDA graph's private pool) and ``blocks``:
    dicts with ``address``, ``size``, ``requested_size`` and ``state`` ("active_allocated",
    "active_pending_free" or "inactive"), in address order. An empty list without CUDA."""
    return list(_c.memory_snapshot())


def _format_size(n: int) -> str:
    for unit in ("B  ", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 * 10 or unit == "TiB":
            return f"{n:6d} {unit}"
        n //= 1024
    return f"{n:6d} PiB"  # pragma: no cover


def _format_count(n: int) -> str:
    for unit in (" ", "K", "M"):
        if abs(n) < 1000 * 10 or unit == "M":
            return f"{n:7d}{unit} "
        n //= 1000
    return f"{n:7d}G "  # pragma: no cover


def memory_summary(device: _DeviceLike = None, abbreviated: bool = False) -> str:
    """A printable table of the allocator's statistics for `device`, laid out as PyTorch's
    memory_summary: current, peak, total allocated and total freed of allocated, active,
    requested, reserved and non-releasable (free but inside a split segment) memory and the
    matching counts, each split by pool unless `abbreviated`."""
    from . import _index
    stats = _c.memory_stats(device)  # raises where CUDA is not available
    rows = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "GPU reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "GPU reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    width = 75
    line = "|" + "-" * width + "|"
    dline = "|" + "=" * width + "|"
    out = [dline,
           "|" + f" tessera CUDA memory summary, device ID {_index(device)} ".center(width) + "|",
           line,
           f"|{'  CUDA OOMs: ' + str(stats['num_ooms']):<37}|"
           f"{'  cudaMalloc retries: ' + str(stats['num_alloc_retries']):<37}|",
           dline,
           "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
           line]
    pools = [("all", None)] if abbreviated else [
        ("all", None), ("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
    for key, title, fmt in rows:
        for pool, sub in pools:
            name = title if sub is None else sub
            vals = [fmt(stats[f"{key}.{pool}.{k}"]) for k in ("current", "peak", "allocated", "freed")]
            out.append(f"| {name:<22}| " + " | ".join(f"{v:>10}" for v in vals) + " |")
        out.append(line)
    out[-1] = dline
    return "\n".join(out) + "\n"
