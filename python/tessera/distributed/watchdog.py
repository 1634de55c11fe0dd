"""The watchdog of process groups whose collectives run asynchronously on a device (NCCL).

Note [The NCCL watchdog]: a NCCL collective is only *queued* by the call that starts it; the
host goes on, and a rank whose peer died would wait forever in the next device
synchronization. As PyTorch's ProcessGroupNCCL does, one daemon thread per process watches
every such group: every `interval` seconds it polls the group's asynchronous error
(``ncclCommGetAsyncError``) and the end events of its in-flight collectives, oldest first.
When a collective has run longer than the group's timeout (``timeout=`` of
``init_process_group``), or NCCL reports an error, the group *fails*:

1. its communicator is aborted (``ncclCommAbort``), which ends the NCCL kernels that wait for
   the dead peer, so the device (and a host waiting on it) gets going again;
2. every later collective on the group, and ``wait()`` on every collective that was in flight,
   raises ``DistBackendError`` with the reason (operation, sequence number, elements, how long
   it ran);
3. what else happens follows PyTorch's ``TORCH_NCCL_ASYNC_ERROR_HANDLING``: ``0`` only
   reports (no abort); ``2`` aborts and raises at the next use; ``1``/``3`` (the default) also
   raise the error in the main thread at once (``PyThreadState_SetAsyncExc``: the main thread
   sees it at its next Python instruction, e.g. when ``ts.cuda.synchronize()`` returns) and,
   if the main thread has not taken it within ``TESSERA_NCCL_ABORT_GRACE`` seconds (default
   10), end the process with exit code 1, as PyTorch tears the process down, so a launcher
   ends the other ranks.

The thread needs the GIL to run: a main thread blocked in a call that holds the GIL cannot be
watched (``ts.cuda.synchronize``, ``Stream.synchronize``, ``Event.synchronize`` and the
distributed package's own waits release it).
"""
from __future__ import annotations

import collections as _collections
import ctypes as _ctypes
import os as _os
import sys as _sys
import threading as _threading
import time as _time
import typing as _t
import weakref as _weakref

if _t.TYPE_CHECKING:
    from typing import Any, Deque, List, Optional

from .store import DistBackendError

__all__ = ["Watchdog", "WatchedGroup", "watchdog"]


def _mode() -> int:
    raw = _os.environ.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", "3")
    try:
        return int(raw)
    except ValueError:
        return 3


class WatchedGroup:
    """What a process group adds to be watched. A subclass provides ``_abort_comm()`` (abort
    the transport; called once, from any thread) and may override ``_async_error()`` (a
    message when the transport reports an asynchronous error, else None). Works it starts go
    through ``_track(work)``; a work has ``_test()`` (True when done), ``_what``,
    ``_describe()``, and ``_seq``."""

    def _init_watch(self, rank: int, timeout: float) -> None:
        self._inflight: Deque[Any] = _collections.deque()
        self._watch_lock = _threading.RLock()   # inflight list, events, launches vs abort
        self._error: Optional[DistBackendError] = None
        self._seq = 0
        self._watch_rank = rank
        self._watch_timeout = timeout
        self._raised_in_main = False

    # -- called by the group's own code (main thread) -------------------------------------
    def _check_usable(self, what: str) -> None:
        if self._error is not None:
            raise DistBackendError(f"{what}: the process group can no longer be used: "
                                   f"{self._error}")

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _track(self, work: Any) -> None:
        work._t0 = _time.monotonic()
        with self._watch_lock:
            self._inflight.append(work)
            self._watch_updated()
        watchdog().watch(self)

    def _watch_updated(self) -> None:
        """Called (under the watch lock) when the in-flight list changed or was polled."""

    # -- called by the watchdog thread ----------------------------------------------------
    def _async_error(self) -> Optional[str]:
        return None

    def _abort_comm(self) -> None:
        raise NotImplementedError

    def _poll(self, now: float) -> Optional[str]:
        """A reason to fail the group, or None. Drops completed works."""
        if self._error is not None:
            return None
        err = self._async_error()
        if err is not None:
            return (f"[Rank {self._watch_rank}] the communicator reported an asynchronous "
                    f"error: {err}")
        with self._watch_lock:
            while self._inflight:
                w = self._inflight[0]
                if w._test():
                    self._inflight.popleft()
                    w._on_device_done()
                    continue
                ran = now - w._t0
                if ran > self._watch_timeout:
                    return (f"[Rank {self._watch_rank}] Watchdog caught collective operation "
                            f"timeout: {w._describe()} ran for {ran * 1e3:.0f} milliseconds "
                            f"before timing out (timeout {self._watch_timeout:.1f} s, "
                            "timeout= of init_process_group); a peer rank may have died, hung "
                            "or called a different collective")
                break
            self._watch_updated()
        return None

    def _fail(self, reason: str, from_watchdog: bool = True) -> DistBackendError:
        """Aborts the transport and records `reason` (once); returns the error."""
        with self._watch_lock:
            if self._error is not None:
                return self._error
            mode = _mode()
            if from_watchdog and mode == 0:
                print(f"tessera.distributed: {reason} (TORCH_NCCL_ASYNC_ERROR_HANDLING=0: "
                      "not aborting)", file=_sys.stderr, flush=True)
                self._watch_timeout = float("inf")     # report once
                return DistBackendError(reason)
            err = DistBackendError(reason + "; the communicator was aborted (ncclCommAbort)")
            self._error = err
            failed = list(self._inflight)
            self._inflight.clear()
            for w in failed:
                w._error = err
            # The error is posted to the main thread before the abort: the abort is what
            # unblocks a main thread waiting on the device (ts.cuda.synchronize), and it must
            # find the error pending when it resumes, not run on as if the collective had
            # succeeded.
            deliver = from_watchdog and mode in (1, 3) and _post_to_main(self, err)
            try:
                self._abort_comm()
            finally:
                print(f"tessera.distributed: {err}", file=_sys.stderr, flush=True)
        if deliver:
            _await_main(self)
        return err


class _Delivery:
    """The error raised asynchronously in the main thread (one class per error, since
    PyThreadState_SetAsyncExc instantiates the class it is given without arguments)."""


def _post_to_main(group: WatchedGroup, err: DistBackendError) -> bool:
    """Makes `err` pending in the main thread (PyThreadState_SetAsyncExc: raised at its next
    Python instruction); False when there is no main thread to take it."""
    main = _threading.main_thread()
    if not main.is_alive() or main.ident is None:
        return False
    message = str(err)

    def init(self: BaseException) -> None:
        DistBackendError.__init__(self, message)
        group._raised_in_main = True
    cls = type("DistBackendError", (DistBackendError, _Delivery), {"__init__": init})
    cls.__module__ = DistBackendError.__module__
    set_exc = _ctypes.pythonapi.PyThreadState_SetAsyncExc
    set_exc.argtypes, set_exc.restype = [_ctypes.c_ulong, _ctypes.py_object], _ctypes.c_int
    set_exc(main.ident, cls)
    return True


def _await_main(group: WatchedGroup) -> None:
    """Waits TESSERA_NCCL_ABORT_GRACE seconds (default 10) for the main thread to take the
    posted error; ends the process (exit code 1) if it does not, as PyTorch's watchdog does."""
    main = _threading.main_thread()
    grace = float(_os.environ.get("TESSERA_NCCL_ABORT_GRACE", 10))
    deadline = _time.monotonic() + grace
    while _time.monotonic() < deadline:
        if group._raised_in_main or not main.is_alive():
            return
        _time.sleep(0.05)
    if not group._raised_in_main and main.is_alive():
        print(f"tessera.distributed: the main thread did not take the error within {grace} s "
              "(TESSERA_NCCL_ABORT_GRACE); ending the process, as PyTorch's watchdog does",
              file=_sys.stderr, flush=True)
        _os._exit(1)


class Watchdog:
    """The process's watchdog thread (started on the first watched group)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self._groups: "_weakref.WeakSet[WatchedGroup]" = _weakref.WeakSet()
        self._lock = _threading.Lock()
        self._thread: Optional[_threading.Thread] = None
        self._stop = _threading.Event()

    def watch(self, group: WatchedGroup) -> None:
        with self._lock:
            self._groups.add(group)
            if self._thread is None or not self._thread.is_alive():
                self._stop.clear()
                self._thread = _threading.Thread(target=self._run, name="tessera-nccl-watchdog",
                                                daemon=True)
                self._thread.start()

    def forget(self, group: WatchedGroup) -> None:
        with self._lock:
            self._groups.discard(group)

    def poll_once(self) -> None:
        now = _time.monotonic()
        with self._lock:
            groups: List[WatchedGroup] = list(self._groups)
        for g in groups:
            try:
                reason = g._poll(now)
            except Exception as e:          # an event query failing is itself an error
                reason = f"[Rank {g._watch_rank}] the watchdog's poll failed: {e}"
            if reason is not None:
                g._fail(reason)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll_once()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        t = self._thread
        if t is not None and t is not _threading.current_thread():
            t.join(timeout)
        self._thread = None


_WATCHDOG: Optional[Watchdog] = None


def watchdog() -> Watchdog:
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = Watchdog(float(_os.environ.get("TESSERA_NCCL_WATCHDOG_INTERVAL", 0.1)))
    return _WATCHDOG
