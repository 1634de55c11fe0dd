"""``tessera.multiprocessing``: the standard :mod:`multiprocessing` with tensors that travel
between processes over shared memory (PyTorch's ``torch.multiprocessing``).

Importing it registers :mod:`.reductions` with :class:`multiprocessing.reduction.ForkingPickler`:
a CPU tensor put on a Queue or passed to a spawned Process is moved into shared memory
(``share_memory_()``) and the receiver gets a tensor over the *same* memory. The strategy is
``file_descriptor`` (the fd of an anonymous memfd travels through SCM_RIGHTS, so no segment can
leak into /dev/shm); see Note [Shared memory] in csrc/core/storage.cpp. CUDA tensors are sent
as copies (no CUDA IPC).
"""
from __future__ import annotations

import multiprocessing as _multiprocessing
from multiprocessing import *  # noqa: F401,F403  (the standard API, re-exported as torch does)

from . import reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, spawn,
                    start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException"] + list(_multiprocessing.__all__)

_all_sharing_strategies = {"file_descriptor"}
_sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Sets the strategy for sharing CPU tensors; only ``"file_descriptor"`` exists here
    (torch's ``"file_system"`` needs its shm manager daemon)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise ValueError(f"set_sharing_strategy: unknown strategy {new_strategy!r}; hint: "
                         f"choose one of {sorted(_all_sharing_strategies)}")
    _sharing_strategy = new_strategy


def get_sharing_strategy() -> str:
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies() -> set[str]:
    """The strategies this platform supports."""
    return set(_all_sharing_strategies)


reductions.init_reductions()
