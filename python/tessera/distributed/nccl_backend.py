"""The CUDA backend: NCCL, loaded at run time with ctypes from the ``nvidia-nccl-cu13`` wheel
(or any ``libnccl.so.2`` the loader finds). A CPU-only build never touches it.

Ordering (Note [NCCL streams]): each group owns a communication stream. A collective records
an event on the caller's current stream, makes the communication stream wait on it, calls
NCCL with the tensors' device pointers on the communication stream, and records a second
event there; ``Work.wait()`` makes the *current* stream wait on that event (the host does not
block), as PyTorch's ProcessGroupNCCL does. Tensors used by a collective are marked with
``record_stream`` so the caching allocator does not hand their memory out before the
communication stream is done with it. Backward kernels on the current stream and DDP's
all-reduces on the communication stream therefore overlap.

Timeouts and dead peers: Note [The NCCL watchdog] in watchdog.py. Exit: Note [NCCL at exit].
"""
from __future__ import annotations

import atexit as _atexit
import ctypes as _ctypes
import glob as _glob
import importlib.util as _importlib_util
import os as _os
import sys as _sys
import threading as _threading
import time as _time
import typing as _t
import weakref as _weakref

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List, Optional, Sequence

from .process_group import ProcessGroup, ReduceOp, Work
from .store import DistBackendError, Store
from . import abort_timer
from .watchdog import WatchedGroup, watchdog

_lib: Any = None
_lib_path = ""

# Note [NCCL through ctypes]: every entry point gets its C signature (nccl.h) before the first
# call. ``ncclUniqueId`` is a struct of 128 bytes that ncclCommInitRank takes BY VALUE (it is
# not a pointer parameter), so its argtype is the Structure itself; ncclComm_t and
# cudaStream_t are opaque pointers, counts are size_t. Without argtypes ctypes would pass
# Python ints as C ints (a 64-bit stream or pointer would be cut to 32 bits) and guess the
# struct's convention. TESSERA_NCCL_LIBRARY names a library to load instead of searching (the
# CPU tests point it at a stand-in that records what it receives).


class _UniqueId(_ctypes.Structure):
    # c_ubyte, not c_char: reading a c_char array field stops at the first NUL byte, which
    # truncated the id on its way through the store (seen on the 2-GPU machine).
    _fields_ = [("internal", _ctypes.c_ubyte * 128)]


def _candidates() -> List[str]:
    if _os.environ.get("TESSERA_NCCL_LIBRARY"):
        return [_os.environ["TESSERA_NCCL_LIBRARY"]]
    dirs: List[str] = []
    try:
        spec = _importlib_util.find_spec("nvidia.nccl")
        dirs += list((spec.submodule_search_locations or []) if spec else [])
    except (ImportError, ValueError):
        pass
    # Also every sys.path entry's nvidia/nccl: a regular `nvidia` package earlier on the path
    # (an old wheel's nvidia/__init__.py) hides the namespace's other folders from find_spec.
    dirs += [_os.path.join(p, "nvidia", "nccl") for p in _sys.path if p]
    found: List[str] = []
    for d in dirs:
        for f in sorted(_glob.glob(_os.path.join(d, "lib", "libnccl.so*")), key=len):
            if f not in found:
                found.append(f)
    # The wheel's library first (libnccl.so.2 before any libnccl.so.2.x.y link), then
    # whatever the dynamic loader finds.
    return found + ["libnccl.so.2", "libnccl.so"]


def _bind(L: Any) -> None:
    P, I, Z = _ctypes.c_void_p, _ctypes.c_int, _ctypes.c_size_t
    sig = {
        "ncclGetErrorString": ([I], _ctypes.c_char_p),
        "ncclGetVersion": ([_ctypes.POINTER(I)], I),
        "ncclGetUniqueId": ([_ctypes.POINTER(_UniqueId)], I),
        "ncclCommInitRank": ([_ctypes.POINTER(P), I, _UniqueId, I], I),
        "ncclCommDestroy": ([P], I),
        "ncclCommAbort": ([P], I),
        "ncclCommGetAsyncError": ([P, _ctypes.POINTER(I)], I),
        "ncclAllReduce": ([P, P, Z, I, I, P, P], I),
        "ncclBroadcast": ([P, P, Z, I, I, P, P], I),
        "ncclReduce": ([P, P, Z, I, I, I, P, P], I),
        "ncclAllGather": ([P, P, Z, I, P, P], I),
        "ncclReduceScatter": ([P, P, Z, I, I, P, P], I),
        "ncclSend": ([P, Z, I, I, P, P], I),
        "ncclRecv": ([P, Z, I, I, P, P], I),
        "ncclGroupStart": ([], I),
        "ncclGroupEnd": ([], I),
    }
    for name, (args, res) in sig.items():
        f = getattr(L, name)
        f.argtypes, f.restype = args, res
    if hasattr(L, "ncclGetLastError"):
        L.ncclGetLastError.argtypes, L.ncclGetLastError.restype = [P], _ctypes.c_char_p


def lib() -> Any:
    global _lib, _lib_path
    if _lib is None:
        errors = []
        for path in _candidates():
            try:
                loaded = _ctypes.CDLL(path, mode=_ctypes.RTLD_GLOBAL)
                _bind(loaded)
            except (OSError, AttributeError) as e:
                errors.append(f"{path}: {e}")
                continue
            _lib, _lib_path = loaded, path
            break
        if _lib is None:
            raise RuntimeError("the NCCL backend needs libnccl.so.2: pip install "
                               "nvidia-nccl-cu13 (tried " + "; ".join(errors) + ")")
    return _lib


def version() -> str:
    """The loaded NCCL's version, e.g. '2.28.9', and the file it came from."""
    v = _ctypes.c_int()
    _check(lib().ncclGetVersion(_ctypes.byref(v)), "ncclGetVersion")
    n = v.value
    major, rest = (n // 10000, n % 10000) if n >= 10000 else (n // 1000, n % 1000)
    minor, patch = rest // 100, rest % 100
    return f"{major}.{minor}.{patch} ({_lib_path})"


def is_available() -> bool:
    from .. import cuda
    if not cuda.is_available():
        return False
    try:
        lib()
        return True
    except RuntimeError:
        return False


def exchange_unique_id(store: Store, rank: int, key: str) -> _UniqueId:
    """Rank 0 makes the id (ncclGetUniqueId) and puts its 128 raw bytes in the store; the
    other ranks wait for them. Every byte travels, NULs included."""
    uid = _UniqueId()
    if rank == 0:
        _check(lib().ncclGetUniqueId(_ctypes.byref(uid)), "ncclGetUniqueId")
        store.set(key, bytes(uid))
    else:
        raw = store.get(key)
        if len(raw) != _ctypes.sizeof(uid):
            raise DistBackendError(f"init_process_group: the NCCL unique id from the "
                                   f"store has {len(raw)} bytes, expected 128")
        _ctypes.memmove(_ctypes.byref(uid), raw, len(raw))
    return uid


def comm_init_rank(uid: _UniqueId, world_size: int, rank: int, device: int) -> Any:
    """ncclCommInitRank on `device` (the caller has made it current): the id by value."""
    comm = _ctypes.c_void_p()
    L = lib()
    res = L.ncclCommInitRank(_ctypes.byref(comm), world_size, uid, rank)
    if res != 0:
        detail = ""
        if hasattr(L, "ncclGetLastError"):
            last = L.ncclGetLastError(None)
            detail = f" ({last.decode(errors='replace')})" if last else ""
        raise DistBackendError(
            f"init_process_group(backend='nccl'): ncclCommInitRank failed on rank {rank} of "
            f"{world_size}, cuda:{device}: NCCL error {res}: "
            f"{L.ncclGetErrorString(res).decode()}{detail}; NCCL {version()}. Each rank "
            "needs its own GPU (ts.cuda.set_device(local_rank) first); NCCL_DEBUG=INFO "
            "tells more")
    return comm


# ncclDataType_t and ncclRedOp_t values from nccl.h
_DTYPES = {"int8": 0, "uint8": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5,
           "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9, "bool": 1,
           "complex64": 7, "complex128": 8, "int16": 6, "uint16": 6}
_OPS = {ReduceOp.SUM: 0, ReduceOp.PRODUCT: 1, ReduceOp.MAX: 2, ReduceOp.MIN: 3,
        ReduceOp.AVG: 4}


def _check(res: int, what: str) -> None:
    if res != 0:
        msg = lib().ncclGetErrorString(res).decode()
        raise DistBackendError(f"{what}: NCCL error {res}: {msg}")


def _dtype_count(t: Any, what: str, reducing: Optional[ReduceOp] = None) -> tuple:
    name = str(t.dtype)
    if name not in _DTYPES:
        raise TypeError(f"{what}: dtype {name} is not supported by NCCL")
    n = t.numel()
    if name.startswith("complex"):
        if reducing is not None and reducing not in (ReduceOp.SUM, ReduceOp.AVG):
            raise ValueError(f"{what}: ReduceOp.{reducing.name} is not defined for {name}")
        n *= 2
    if name in ("int16", "uint16") and reducing is not None:
        raise TypeError(f"{what}: NCCL cannot reduce {name}")
    if name in ("int16", "uint16", "bool") and reducing is None:
        return _DTYPES["uint8"], n * t.element_size()
    return _DTYPES[name], n


def _op(op: ReduceOp, t: Any, what: str) -> int:
    if op not in _OPS:
        raise ValueError(f"{what}: ReduceOp.{op.name} is not supported by NCCL")
    if op == ReduceOp.AVG and str(t.dtype) in ("bool", "int8", "uint8", "int32", "uint32",
                                               "int64", "uint64"):
        raise ValueError(f"{what}: ReduceOp.AVG needs a floating dtype, got {t.dtype}")
    if str(t.dtype) == "bool":
        return {0: 2, 1: 3, 2: 2, 3: 3}[_OPS[op]]     # SUM = or = MAX, PRODUCT = and = MIN
    return _OPS[op]


def comm_abort(comm: Any) -> int:
    """ncclCommAbort: ends the communicator's in-flight kernels and frees it (local)."""
    return int(lib().ncclCommAbort(comm))


def comm_async_error(comm: Any) -> Optional[str]:
    """ncclCommGetAsyncError: None while the communicator is healthy (ncclSuccess or
    ncclInProgress), else NCCL's error text."""
    res = _ctypes.c_int(0)
    L = lib()
    rc = L.ncclCommGetAsyncError(comm, _ctypes.byref(res))
    code = res.value if rc == 0 else rc
    if code in (0, 7):                       # ncclSuccess, ncclInProgress
        return None
    detail = ""
    if hasattr(L, "ncclGetLastError"):
        last = L.ncclGetLastError(comm)
        detail = f" ({last.decode(errors='replace')})" if last else ""
    return f"NCCL error {code}: {L.ncclGetErrorString(code).decode()}{detail}"


def _blocking_wait() -> bool:
    return _os.environ.get("TORCH_NCCL_BLOCKING_WAIT", _os.environ.get(
        "NCCL_BLOCKING_WAIT", "0")).lower() in ("1", "true", "yes")


def _never() -> bool:
    return False


class _NCCLWork(Work):
    """Completion is an event on the communication stream. wait() orders the current stream
    after it and does not block the host, unless a timeout is passed or
    TORCH_NCCL_BLOCKING_WAIT=1: then the host waits (releasing the GIL) and a collective
    that does not end in time fails its group (ncclCommAbort) and raises here."""

    def __init__(self, pg: "NCCLProcessGroup", event: int, keep: List[Any],
                 finish: Optional[Callable[[], None]], what: str, numel: int,
                 dtype: str) -> None:
        super().__init__(_never, finish, pg.timeout, what)
        del self._test          # the method below: a bound method kept here would be a cycle,
        self._pg, self._event, self._keep = pg, event, keep   # and the event freed by GC only
        self._seq, self._numel, self._dtype = pg._next_seq(), numel, dtype
        self._error: Optional[DistBackendError] = None
        _LIVE_WORKS.add(self)

    def _describe(self) -> str:
        return (f"{self._what} (sequence number {self._seq}, {self._numel} elements of "
                f"{self._dtype}, cuda:{self._pg.device})")

    def _test(self) -> bool:
        with self._pg._watch_lock:
            if self._event is None:
                return True
            from .. import _C
            return bool(_C._cuda.event_query(self._event))

    def _on_device_done(self) -> None:
        pass

    def _raise_failed(self) -> None:
        if self._error is not None:
            raise DistBackendError(f"{self._what}: {self._error}")

    def is_completed(self) -> bool:
        if self._error is not None:
            return True
        return super().is_completed()

    def wait(self, timeout: Optional[float] = None) -> bool:
        self._raise_failed()
        if self._done:
            return True
        from .. import _C
        c = _C._cuda
        if timeout is not None or _blocking_wait():
            if timeout is not None and hasattr(timeout, "total_seconds"):
                timeout = timeout.total_seconds()      # PyTorch passes a timedelta
            limit = self._pg.timeout if timeout is None else float(timeout)
            deadline = _time.monotonic() + limit
            delay = 1e-5
            while not self._test():
                self._raise_failed()
                if _time.monotonic() > deadline:
                    err = self._pg._fail(
                        f"[Rank {self._pg.rank()}] {self._describe()} did not complete within "
                        f"{limit:.1f} s (Work.wait); a peer rank may have died, hung or "
                        "called a different collective", from_watchdog=False)
                    raise DistBackendError(f"{self._what}: {err}")
                _time.sleep(delay)                 # releases the GIL: the watchdog runs
                delay = min(delay * 2, 1e-3)
            self._raise_failed()
        else:
            dev = self._pg.device
            with self._pg._watch_lock:
                if self._event is not None:
                    c.stream_wait_event(dev, c.current_stream(dev), self._event)
        self._complete()
        return True

    def _complete(self) -> None:
        super()._complete()
        self._keep = []

    def _release(self) -> None:
        """Drops the kept tensors and the event (idempotent)."""
        self._keep = []
        with self._pg._watch_lock:
            event, self._event = self._event, None
        if event is not None:
            from .. import _C
            _C._cuda.destroy_event(event)

    def __del__(self) -> None:
        if _sys.is_finalizing():  # _at_exit ran; nothing may be imported now
            return
        try:
            self._release()
        except Exception:
            pass


_LIVE_WORKS: "_weakref.WeakSet[_NCCLWork]" = _weakref.WeakSet()
_LIVE_GROUPS: "_weakref.WeakSet[NCCLProcessGroup]" = _weakref.WeakSet()
_STREAMS: List[Any] = []


def _comm_stream(device: int) -> Any:
    """A new communication stream that lives as long as the process (Note [NCCL at exit])."""
    from .. import cuda
    s = cuda.Stream(device)
    s._owned = False            # never destroyed: tensors may be record_stream'ed on it
    _STREAMS.append(s)
    return s


# Note [NCCL at exit]: what a worker must not do at exit, each seen or possible:
# - destroy a communication stream while tensors used by collectives are alive: those tensors
#   were record_stream'ed on it, so freeing them later makes the caching allocator record an
#   event on a destroyed stream (the crash at exit after destroy_process_group, which dropped
#   the group and its stream before the tensors). Communication streams are therefore never
#   destroyed (as PyTorch's stream pool); the driver frees them with the process.
# - leave a communicator alive into interpreter finalization and the CUDA runtime's teardown
#   (NCCL's proxy threads go on touching CUDA): _at_exit, registered when this module is
#   imported (after the CUDA backend's, so it runs first), stops the watchdog, waits (bounded)
#   for in-flight collectives, aborts every communicator destroy_process_group did not
#   destroy (PyTorch does the same in ~ProcessGroupNCCL, with a warning), and only then
#   destroys the events of works never waited on and drops their tensors, while the CUDA
#   backend is still whole, not in finalization's garbage collection.
@_atexit.register
def _at_exit() -> None:
    from .watchdog import watchdog
    try:
        watchdog().stop()
    except Exception:
        pass
    groups = [g for g in list(_LIVE_GROUPS) if g.comm]
    if groups:
        print("tessera.distributed: WARNING: process group has NOT been destroyed before "
              "exit; call destroy_process_group() at the end of the script (aborting the "
              "NCCL communicators now)", file=_sys.stderr, flush=True)
    for g in groups:
        try:
            g._drain(min(g.timeout, 10.0))
            g._abort_comm()
        except Exception:
            pass
    for w in list(_LIVE_WORKS):
        try:
            w._release()
        except Exception:
            pass


def _pick_device(device_id: Any) -> int:
    from .. import cuda
    if device_id is not None:
        if isinstance(device_id, int):
            return device_id
        s = str(device_id)          # "cuda:1", a Device
        return int(s.split(":", 1)[1]) if ":" in s else cuda.current_device()
    device = cuda.current_device()
    local = _os.environ.get("LOCAL_RANK")
    if device == 0 and local is not None and local.isdigit():
        device = int(local) % max(cuda.device_count(), 1)
    return device


class NCCLProcessGroup(ProcessGroup, WatchedGroup):
    def __init__(self, comm: _ctypes.c_void_p, rank: int, size: int, timeout: float,
                 device: int) -> None:
        super().__init__(rank, size, timeout)
        self._init_watch(rank, timeout)
        self.comm, self.device = comm, device
        self.stream = _comm_stream(device)
        self._launch_lock = _threading.Lock()
        self._launch_t0 = 0.0
        self._timer: Any = None
        self._timer_target: Optional[float] = None
        self._timer_fired = False
        if abort_timer.enabled():
            try:                           # Note [Abort without the GIL]
                fn = _ctypes.cast(lib().ncclCommAbort, _ctypes.c_void_p).value
                self._timer = abort_timer.AbortTimer(fn, comm.value)
            except (OSError, AttributeError):
                self._timer = None
        _LIVE_GROUPS.add(self)
        watchdog().watch(self)

    @staticmethod
    def create(store: Store, rank: int, world_size: int, timeout: float,
               key: str = "nccl/id", device_id: Any = None) -> "NCCLProcessGroup":
        """Joins the NCCL communicator of `world_size` ranks on this process's GPU: the one
        `device_id` names, else the current device (ts.cuda.set_device), except that a
        process still on cuda:0 with LOCAL_RANK=k set takes cuda:k (mod the device count),
        the device PyTorch's NCCL group would pick for it. That device is made current
        before ncclCommInitRank, which binds the communicator to the current device."""
        from .. import cuda
        if not cuda.is_available():
            raise RuntimeError("init_process_group(backend='nccl'): no CUDA device (or this "
                               "build has no CUDA backend); use backend='gloo' for CPU")
        lib()
        device = _pick_device(device_id)
        cuda.set_device(device)
        uid = exchange_unique_id(store, rank, key)
        comm = comm_init_rank(uid, world_size, rank, device)
        return NCCLProcessGroup(comm, rank, world_size, timeout, device)

    def name(self) -> str:
        return "nccl"

    def _launch(self, what: str, tensors: Sequence[Any],
                call: Callable[[int], None], finish: Optional[Callable[[], None]] = None
                ) -> Work:
        from .. import _C
        c = _C._cuda
        for t in tensors:
            if t.device.type != "cuda" or t.device.index != self.device:
                raise ValueError(f"{what}: the NCCL backend of this process works on tensors "
                                 f"on cuda:{self.device}, got one on {t.device} (call "
                                 "ts.cuda.set_device(local_rank) before init_process_group)")
        self._check_usable(what)
        dev, s = self.device, self.stream.cuda_stream
        ready = c.create_event(dev, False)
        c.record_event(ready, dev, c.current_stream(dev))
        c.stream_wait_event(dev, s, ready)
        c.destroy_event(ready)
        with self._launch_lock:
            self._check_usable(what)            # the watchdog may have aborted meanwhile
            self._launch_t0 = _time.monotonic()  # a call that blocks is watched too
            try:
                call(s)
            finally:
                self._launch_t0 = 0.0
        for t in tensors:
            c.record_stream(t, s)
        done = c.create_event(dev, False)
        c.record_event(done, dev, s)
        main = tensors[0] if tensors else None
        work = _NCCLWork(self, done, list(tensors), finish, what,
                         main.numel() if main is not None else 0,
                         str(main.dtype) if main is not None else "-")
        self._track(work)
        return work

    # -- watchdog (Note [The NCCL watchdog]) ------------------------------------------------
    def _timer_disarm(self) -> bool:
        """Disarms the abort timer; True when it had fired (the communicator is gone)."""
        with self._watch_lock:
            if self._timer is None:
                return self._timer_fired
            if self._timer.set(None):
                self._timer_fired = True
                self.comm = _ctypes.c_void_p()      # freed by ncclCommAbort in C
            self._timer_target = None
            return self._timer_fired

    def _watch_updated(self) -> None:
        """Keeps the abort timer at the oldest in-flight collective's start + timeout + slack
        (Note [Abort without the GIL])."""
        if self._timer is None or self._timer_fired or not self.comm:
            return
        target = None
        if self._inflight:
            slack = max(2.0, self.timeout / 10)
            target = self._inflight[0]._t0 + self.timeout + slack
        if target == self._timer_target:
            return
        if self._timer.set(None if target is None else target - _time.monotonic()):
            self._timer_fired = True
            self.comm = _ctypes.c_void_p()
            return
        self._timer_target = target

    def _async_error(self) -> Optional[str]:
        if self._timer_disarm():           # re-armed at the end of the poll
            return ("the abort timer fired: the watchdog could not run (the main thread held "
                    "the GIL, e.g. blocked in .item() or .cpu()) for longer than the timeout "
                    "plus slack, so ncclCommAbort ran from the timer")
        t0 = self._launch_t0
        if t0 and _time.monotonic() - t0 > self.timeout:
            return (f"a NCCL call that queues a collective has blocked for more than "
                    f"{self.timeout:.1f} s")
        # Under the launch lock: shutdown() destroys the communicator under it too, so the
        # query never sees a freed one. A launch in progress: asked again next round.
        if not self._launch_lock.acquire(blocking=False):
            return None
        try:
            return comm_async_error(self.comm) if self.comm else None
        finally:
            self._launch_lock.release()

    def _abort_comm(self) -> None:
        """ncclCommAbort, once. A launch in progress gets a second to finish queueing (NCCL
        must not free the communicator under it); one blocked longer is what abort ends."""
        got = self._launch_lock.acquire(timeout=1.0)
        try:
            fired = self._timer_disarm()     # the timer must not abort a second time
            comm, self.comm = self.comm, _ctypes.c_void_p()
            if comm and not fired:
                comm_abort(comm)
        finally:
            if got:
                self._launch_lock.release()

    def _drain(self, limit: float) -> bool:
        """Waits (host, GIL released) up to `limit` s for the in-flight collectives."""
        deadline = _time.monotonic() + limit
        while True:
            with self._watch_lock:
                while self._inflight and self._inflight[0]._test():
                    self._inflight.popleft()
                if not self._inflight:
                    return True
            if _time.monotonic() > deadline:
                return False
            _time.sleep(1e-3)

    def _staged(self, t: Any) -> tuple:
        if t.is_contiguous():
            return t, None
        staged = t.contiguous()

        def back() -> None:
            from .. import no_grad
            with no_grad():
                t.copy_(staged)
        return staged, back

    def allreduce(self, tensor: Any, op: ReduceOp) -> Work:
        t, back = self._staged(tensor)
        dt, n = _dtype_count(t, "all_reduce", op)
        o = _op(op, t, "all_reduce")
        p = _ctypes.c_void_p(t.data_ptr())
        return self._launch("all_reduce", [t], lambda s: _check(lib().ncclAllReduce(
            p, p, _ctypes.c_size_t(n), dt, o, self.comm, _ctypes.c_void_p(s)), "all_reduce"),
            back)

    def broadcast(self, tensor: Any, root: int) -> Work:
        t, back = self._staged(tensor)
        dt, n = _dtype_count(t, "broadcast")
        p = _ctypes.c_void_p(t.data_ptr())
        return self._launch("broadcast", [t], lambda s: _check(lib().ncclBroadcast(
            p, p, _ctypes.c_size_t(n), dt, root, self.comm, _ctypes.c_void_p(s)), "broadcast"),
            back)

    def reduce(self, tensor: Any, root: int, op: ReduceOp) -> Work:
        t, back = self._staged(tensor)
        dt, n = _dtype_count(t, "reduce", op)
        o = _op(op, t, "reduce")
        p = _ctypes.c_void_p(t.data_ptr())
        return self._launch("reduce", [t], lambda s: _check(lib().ncclReduce(
            p, p, _ctypes.c_size_t(n), dt, o, root, self.comm, _ctypes.c_void_p(s)), "reduce"),
            back)

    def allgather_into(self, output: Any, input: Any) -> Work:
        out, back = self._staged(output)
        dt, n = _dtype_count(input, "all_gather")
        pi, po = _ctypes.c_void_p(input.data_ptr()), _ctypes.c_void_p(out.data_ptr())
        return self._launch("all_gather", [out, input], lambda s: _check(lib().ncclAllGather(
            pi, po, _ctypes.c_size_t(n), dt, self.comm, _ctypes.c_void_p(s)), "all_gather"), back)

    def reduce_scatter_into(self, output: Any, input: Any, op: ReduceOp) -> Work:
        out, back = self._staged(output)
        dt, n = _dtype_count(out, "reduce_scatter", op)
        o = _op(op, out, "reduce_scatter")
        pi, po = _ctypes.c_void_p(input.data_ptr()), _ctypes.c_void_p(out.data_ptr())
        return self._launch("reduce_scatter", [out, input], lambda s: _check(
            lib().ncclReduceScatter(pi, po, _ctypes.c_size_t(n), dt, o, self.comm,
                                    _ctypes.c_void_p(s)), "reduce_scatter"), back)

    def _p2p_group(self, what: str, tensors: Sequence[Any],
                   pairs: List[tuple], back: Optional[Callable[[], None]]) -> Work:
        """pairs: (is_send, pointer, count, nccl dtype, peer), issued in one NCCL group."""
        def call(s: int) -> None:
            L = lib()
            _check(L.ncclGroupStart(), what)
            for is_send, ptr, count, dt, peer in pairs:
                f = L.ncclSend if is_send else L.ncclRecv
                _check(f(_ctypes.c_void_p(ptr), _ctypes.c_size_t(count), dt, peer, self.comm,
                         _ctypes.c_void_p(s)), what)
            _check(L.ncclGroupEnd(), what)
        return self._launch(what, tensors, call, back)

    def alltoall(self, output: Any, input: Any, out_counts: Sequence[int],
                 in_counts: Sequence[int]) -> Work:
        out, back = self._staged(output)
        dt, _ = _dtype_count(out, "all_to_all")
        scale = _dtype_count(out, "all_to_all")[1] // max(out.numel(), 1) if out.numel() else 1
        es = input.element_size()
        pairs, oi, oo = [], 0, 0
        for peer in range(self._size):
            pairs.append((True, input.data_ptr() + oi * es, in_counts[peer] * scale, dt, peer))
            pairs.append((False, out.data_ptr() + oo * es, out_counts[peer] * scale, dt, peer))
            oi += in_counts[peer]
            oo += out_counts[peer]
        return self._p2p_group("all_to_all", [out, input], pairs, back)

    def gather(self, output: Optional[Any], input: Any, root: int) -> Work:
        dt, n = _dtype_count(input, "gather")
        if self._rank != root:
            return self._p2p_group("gather", [input], [(True, input.data_ptr(), n, dt, root)],
                                   None)
        es = input.numel() * input.element_size()
        pairs = [(True, input.data_ptr(), n, dt, root)]
        pairs += [(False, output.data_ptr() + r * es, n, dt, r) for r in range(self._size)]
        return self._p2p_group("gather", [input, output], pairs, None)

    def scatter(self, output: Any, input: Optional[Any], root: int) -> Work:
        out, back = self._staged(output)
        dt, n = _dtype_count(out, "scatter")
        pairs = [(False, out.data_ptr(), n, dt, root)]
        ts = [out]
        if self._rank == root:
            es = out.numel() * out.element_size()
            pairs += [(True, input.data_ptr() + r * es, n, dt, r) for r in range(self._size)]
            ts.append(input)
        return self._p2p_group("scatter", ts, pairs, back)

    def send(self, tensor: Any, dst: int, tag: int) -> Work:
        t, _ = self._staged(tensor)
        dt, n = _dtype_count(t, "send")
        return self._p2p_group("send", [t], [(True, t.data_ptr(), n, dt, dst)], None)

    def recv(self, tensor: Any, src: Optional[int], tag: int) -> Work:
        if src is None:
            raise ValueError("recv: the NCCL backend needs src= (NCCL has no receive from "
                             "any rank)")
        t, back = self._staged(tensor)
        dt, n = _dtype_count(t, "recv")
        w = self._p2p_group("recv", [t], [(False, t.data_ptr(), n, dt, src)], back)
        w._result = [src]
        return w

    def batch_p2p(self, ops: Sequence[tuple]) -> List[Work]:
        """One NCCL group of all the sends and receives: one Work (PyTorch's coalesced form)."""
        pairs, tensors, backs = [], [], []
        for is_send, tensor, peer, _ in ops:
            t, back = self._staged(tensor)
            dt, n = _dtype_count(t, "batch_isend_irecv")
            pairs.append((bool(is_send), t.data_ptr(), n, dt, int(peer)))
            tensors.append(t)
            if back is not None and not is_send:
                backs.append(back)

        def finish() -> None:
            for b in backs:
                b()
        return [self._p2p_group("batch_isend_irecv", tensors, pairs, finish if backs else None)]

    def barrier(self) -> Work:
        """An all-reduce of one element that the host waits for (bounded by the timeout)."""
        from .._creation import zeros
        one = zeros((1,), dtype="float32", device=f"cuda:{self.device}")
        self.allreduce(one, ReduceOp.SUM).wait(timeout=self.timeout)
        return Work.completed()

    def split(self, ranks: Sequence[int]) -> Optional["NCCLProcessGroup"]:
        raise NotImplementedError("use split_with_store")

    def split_with_store(self, ranks: Sequence[int], store: Store) -> Optional[
            "NCCLProcessGroup"]:
        if self._rank not in ranks:
            return None
        r = list(ranks).index(self._rank)
        return NCCLProcessGroup.create(store, r, len(ranks), self.timeout, key="nccl/id",
                                       device_id=self.device)

    def shutdown(self) -> None:
        """destroy_process_group: ncclCommDestroy once every collective in flight has ended
        (within the timeout); a group that failed, or whose collectives do not end, is
        aborted instead, since ncclCommDestroy would wait for them. The communication stream
        stays (Note [NCCL at exit])."""
        watchdog().forget(self)
        _LIVE_GROUPS.discard(self)
        if self._timer_disarm() or not self.comm:
            self._delete_timer()
            return
        if self._error is not None or not self._drain(self.timeout):
            self._abort_comm()
            self._delete_timer()
            return
        with self._launch_lock:
            fired = self._delete_timer()
            comm, self.comm = self.comm, _ctypes.c_void_p()
        if comm and not fired:
            _check(lib().ncclCommDestroy(comm), "destroy_process_group (ncclCommDestroy)")

    def _delete_timer(self) -> bool:
        with self._watch_lock:
            timer, self._timer = self._timer, None
            if timer is not None and timer.delete():
                self._timer_fired = True
            return self._timer_fired
