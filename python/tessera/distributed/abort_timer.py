"""A POSIX timer that calls a C function (``ncclCommAbort``) without Python: the watchdog's
backstop for a main thread that blocks while holding the GIL.

Note [Abort without the GIL]: the watchdog thread (watchdog.py) needs the GIL, and a main
thread blocked in a C++ call that keeps it (a device-to-host copy, ``.item()``, waiting for a
collective whose peer hangs) would starve it forever. So each NCCL group also arms a POSIX
timer (``timer_create`` with ``SIGEV_THREAD``): at expiry glibc calls the notify function in
a thread of its own, with the timer's value as argument; the function is ``ncclCommAbort``
itself and the value the communicator (a ``union sigval`` holding a pointer is passed as a
pointer on x86-64 and AArch64), so the abort happens in C with no Python involved. The kernel
waiting for the peer then ends, the blocked call returns, and the watchdog, running again,
sees from ``timer_settime``'s old value that the timer expired and fails the group without
touching the (freed) communicator. The timer is kept at (start of the oldest collective in
flight) + timeout + slack, slack = max(2 s, timeout / 10), so the Python watchdog, which acts
at the timeout, normally goes first; the timer only fires when the watchdog could not run for
that long. A collective that completed while the main thread kept the GIL for longer than
that would be aborted too (the watchdog could not see it complete): set
TESSERA_NCCL_TIMER_ABORT=0 to do without the backstop. Linux (glibc) only; elsewhere, or if
the timer cannot be made, the group goes without it.
"""
from __future__ import annotations

import ctypes as _ctypes
import ctypes.util as _ctypes_util
import os as _os
import sys as _sys
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Optional

__all__ = ["AbortTimer"]

_SIGEV_THREAD = 2
_CLOCK_MONOTONIC = 1


class _Timespec(_ctypes.Structure):
    _fields_ = [("tv_sec", _ctypes.c_long), ("tv_nsec", _ctypes.c_long)]


class _Itimerspec(_ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class _SigevThread(_ctypes.Structure):
    _fields_ = [("function", _ctypes.c_void_p), ("attribute", _ctypes.c_void_p)]


class _SigevUnion(_ctypes.Union):
    _fields_ = [("pad", _ctypes.c_int * 12), ("tid", _ctypes.c_int), ("thread", _SigevThread)]


class _Sigevent(_ctypes.Structure):
    """glibc's struct sigevent (64 bytes on 64-bit Linux)."""
    _fields_ = [("value", _ctypes.c_void_p), ("signo", _ctypes.c_int), ("notify", _ctypes.c_int),
                ("un", _SigevUnion)]


_libc: Any = None


def _timers() -> Any:
    global _libc
    if _libc is None:
        names = [None, _ctypes_util.find_library("rt")]
        for n in names:
            try:
                L = _ctypes.CDLL(n)
                L.timer_create
            except (OSError, AttributeError, TypeError):
                continue
            L.timer_create.argtypes = [_ctypes.c_int, _ctypes.POINTER(_Sigevent),
                                       _ctypes.POINTER(_ctypes.c_void_p)]
            L.timer_settime.argtypes = [_ctypes.c_void_p, _ctypes.c_int,
                                        _ctypes.POINTER(_Itimerspec),
                                        _ctypes.POINTER(_Itimerspec)]
            L.timer_gettime.argtypes = [_ctypes.c_void_p, _ctypes.POINTER(_Itimerspec)]
            L.timer_delete.argtypes = [_ctypes.c_void_p]
            _libc = L
            break
        else:
            _libc = False
    return _libc


class AbortTimer:
    """A one-shot timer that calls ``function(value)`` in C at expiry. ``set(seconds)`` arms
    it (None disarms) and returns True when it had expired since it was last armed (then the
    function has run or is running)."""

    def __init__(self, function: int, value: int) -> None:
        self._timer = _ctypes.c_void_p()
        self._armed = False
        L = _timers()
        if not L or not _sys.platform.startswith("linux") or sizeof_ok() is False:
            raise OSError("POSIX timers with SIGEV_THREAD are not available here")
        ev = _Sigevent()
        ev.notify = _SIGEV_THREAD
        ev.value = value
        ev.un.thread.function = function
        ev.un.thread.attribute = None
        if L.timer_create(_CLOCK_MONOTONIC, _ctypes.byref(ev), _ctypes.byref(self._timer)) != 0:
            raise OSError(_ctypes.get_errno(), "timer_create failed")
        self._live = True

    def set(self, seconds: Optional[float]) -> bool:
        """Arms the timer `seconds` from now (None: disarms); True if it had expired."""
        if not self._live:
            return False
        new = _Itimerspec()
        if seconds is not None:
            s = max(float(seconds), 1e-3)
            new.it_value.tv_sec = int(s)
            new.it_value.tv_nsec = int((s - int(s)) * 1e9)
        old = _Itimerspec()
        if _timers().timer_settime(self._timer, 0, _ctypes.byref(new), _ctypes.byref(old)) != 0:
            return False
        fired = self._armed and old.it_value.tv_sec == 0 and old.it_value.tv_nsec == 0
        self._armed = seconds is not None
        return fired

    @property
    def armed(self) -> bool:
        return self._armed

    def delete(self) -> bool:
        """Disarms and deletes the timer; True if it had expired."""
        if not self._live:
            return False
        fired = self.set(None)
        _timers().timer_delete(self._timer)
        self._live = False
        return fired


def sizeof_ok() -> bool:
    return _ctypes.sizeof(_Sigevent) == 64 and _ctypes.sizeof(_ctypes.c_void_p) == 8


def enabled() -> bool:
    return _os.environ.get("TESSERA_NCCL_TIMER_ABORT", "1") not in ("0", "false", "no")
