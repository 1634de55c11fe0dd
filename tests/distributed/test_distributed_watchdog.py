"""Note [The NCCL watchdog] on CPU: the watchdog thread with a stand-in group whose collectives
never end (what a dead peer does to a NCCL collective), TORCH_NCCL_ASYNC_ERROR_HANDLING's
modes, the process teardown when the main thread cannot take the error, and the two NCCL
entry points it uses (ncclCommAbort, ncclCommGetAsyncError) against the stand-in libnccl."""
import ctypes
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from tessera.distributed import DistBackendError
from tessera.distributed import nccl_backend as nb
from tessera.distributed.watchdog import WatchedGroup, watchdog

HERE = os.path.dirname(os.path.abspath(__file__))
STUB_SRC = os.path.join(HERE, "nccl_stub.c")


class FakeWork:
    def __init__(self, group, what="all_reduce", done=False):
        self._what, self._done_flag, self._error = what, done, None
        self._seq = group._next_seq()

    def _test(self):
        return self._done_flag

    def _describe(self):
        return f"{self._what} (sequence number {self._seq}, 4 elements of float32)"

    def _on_device_done(self):
        pass


class FakeGroup(WatchedGroup):
    def __init__(self, timeout, async_error=None):
        self._init_watch(rank=0, timeout=timeout)
        self.aborts = 0
        self.async_error = async_error

    def _abort_comm(self):
        self.aborts += 1

    def _async_error(self):
        return self.async_error

    def start(self, done=False):
        w = FakeWork(self, done=done)
        self._track(w)
        return w


def _wait_for_raise(seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.005)


def _until(cond, seconds=10.0):
    """Waits (a loaded CI machine may run the watchdog late) until cond() or the deadline."""
    deadline = time.monotonic() + seconds
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)
    return cond()


def test_a_collective_that_never_ends_aborts_and_raises_in_the_main_thread(monkeypatch):
    monkeypatch.delenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", raising=False)
    g = FakeGroup(timeout=0.3)
    ok = g.start(done=True)
    stuck = g.start()
    t0 = time.monotonic()
    with pytest.raises(DistBackendError) as e:
        _wait_for_raise(10)
    took = time.monotonic() - t0
    assert 0.3 <= took < 8, took
    msg = str(e.value)
    for part in ("[Rank 0] Watchdog caught collective operation timeout", "all_reduce",
                 "sequence number 2", "milliseconds", "ncclCommAbort", "timeout="):
        assert part in msg, (part, msg)
    assert g.aborts == 1 and g._raised_in_main
    assert stuck._error is not None and ok._error is None
    with pytest.raises(DistBackendError, match="can no longer be used"):
        g._check_usable("broadcast")
    time.sleep(0.3)                       # the watchdog does not abort twice
    assert g.aborts == 1
    watchdog().forget(g)


def test_an_asynchronous_nccl_error_fails_the_group(monkeypatch):
    monkeypatch.delenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", raising=False)
    g = FakeGroup(timeout=60)
    g.start()
    g.async_error = "NCCL error 6: remote process exited or there was a network error"
    with pytest.raises(DistBackendError, match="remote process exited"):
        _wait_for_raise(10)
    assert g.aborts == 1
    watchdog().forget(g)


def test_cleanup_only_mode_raises_at_the_next_use_not_at_once(monkeypatch):
    monkeypatch.setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2")
    g = FakeGroup(timeout=0.2)
    w = g.start()
    assert _until(lambda: g.aborts == 1)  # not interrupted meanwhile
    assert w._error is not None
    with pytest.raises(DistBackendError, match="timed out|timeout"):
        g._check_usable("all_reduce")
    watchdog().forget(g)


def test_mode_zero_reports_without_aborting(monkeypatch, capfd):
    monkeypatch.setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0")
    g = FakeGroup(timeout=0.2)
    g.start()
    err = ""
    deadline = time.monotonic() + 10
    while "Watchdog caught" not in err and time.monotonic() < deadline:
        time.sleep(0.05)
        err += capfd.readouterr().err
    time.sleep(0.3)
    err += capfd.readouterr().err
    assert g.aborts == 0 and g._error is None
    assert err.count("Watchdog caught collective operation timeout") == 1, err
    watchdog().forget(g)


def test_completed_collectives_leave_the_watch_list(monkeypatch):
    monkeypatch.delenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", raising=False)
    g = FakeGroup(timeout=30)
    works = [g.start() for _ in range(3)]
    for w in works:
        w._done_flag = True
    assert _until(lambda: not g._inflight)
    assert g.aborts == 0 and g._error is None
    watchdog().forget(g)


def test_a_main_thread_that_cannot_take_the_error_ends_the_process():
    """The main thread sleeps in C (as one blocked in a device wait would): the error cannot
    be raised there, so after TESSERA_NCCL_ABORT_GRACE the process ends with exit code 1, as
    PyTorch's watchdog tears the process down, and a launcher then ends the other ranks."""
    code = (
        "import sys, time\n"
        f"sys.path.insert(0, {HERE!r})\n"
        "from test_distributed_watchdog import FakeGroup\n"
        "g = FakeGroup(timeout=0.2)\n"
        "g.start()\n"
        "time.sleep(30)\n"
        "print('NOT ENDED')\n")
    env = dict(os.environ, TESSERA_NCCL_ABORT_GRACE="0.5")
    env.pop("TORCH_NCCL_ASYNC_ERROR_HANDLING", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert time.monotonic() - t0 < 15
    assert "NOT ENDED" not in r.stdout
    assert "Watchdog caught collective operation timeout" in r.stderr, r.stderr
    assert "ending the process" in r.stderr, r.stderr


# ------------------------------------------------------------------ the NCCL entry points
@pytest.fixture
def stub(tmp_path, monkeypatch):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    assert cc, "a C compiler is needed to build the NCCL stand-in"
    out = str(tmp_path / "libnccl_stub.so")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", STUB_SRC, "-o", out],
                   check=True)
    monkeypatch.setenv("TESSERA_NCCL_LIBRARY", out)
    monkeypatch.setattr(nb, "_lib", None)
    monkeypatch.setattr(nb, "_lib_path", "")
    L = nb.lib()
    L.stub_last_aborted.restype = ctypes.c_void_p
    yield L
    L.stub_set_async_error(0)


def test_comm_abort_and_async_error_bindings(stub):
    comm = ctypes.c_void_p(0x7F00_0000_1234)
    assert nb.comm_abort(comm) == 0
    assert stub.stub_last_aborted() == 0x7F00_0000_1234      # the pointer kept 64 bits
    assert nb.comm_async_error(comm) is None                  # ncclSuccess
    stub.stub_set_async_error(7)
    assert nb.comm_async_error(comm) is None                  # ncclInProgress is not an error
    stub.stub_set_async_error(6)
    msg = nb.comm_async_error(comm)
    assert msg is not None and "NCCL error 6" in msg and "remote process exited" in msg


def test_blocking_wait_switch(monkeypatch):
    monkeypatch.delenv("NCCL_BLOCKING_WAIT", raising=False)
    monkeypatch.setenv("TORCH_NCCL_BLOCKING_WAIT", "1")
    assert nb._blocking_wait()
    monkeypatch.setenv("TORCH_NCCL_BLOCKING_WAIT", "0")
    assert not nb._blocking_wait()


# ------------------------------------------------ the NCCL group's own code, without a GPU
class _FakeCuda:
    """tessera._C._cuda stand-in: events are numbers whose completion the test decides."""

    def __init__(self):
        self.done, self.n, self.destroyed_streams, self.destroyed_events = {}, 100, [], []

    def create_event(self, dev, timing):
        self.n += 1
        self.done[self.n] = False
        return self.n

    def event_query(self, e):
        return self.done.get(e, True)

    def destroy_event(self, e):
        self.destroyed_events.append(e)
        self.done.pop(e, None)

    def destroy_stream(self, i, s):
        self.destroyed_streams.append(s)

    def finish_all(self):
        for e in self.done:
            self.done[e] = True

    record_event = stream_wait_event = staticmethod(lambda *a: None)
    record_stream = staticmethod(lambda *a: None)
    current_stream = staticmethod(lambda d: 0)
    create_stream = staticmethod(lambda i, p: 0xABC)


class _FakeTensor:
    class device:
        type, index = "cuda", 0

    dtype = "float32"

    def is_contiguous(self):
        return True

    def numel(self):
        return 4

    def data_ptr(self):
        return 0x1000

    def element_size(self):
        return 4


@pytest.fixture
def nccl_group(stub, monkeypatch):
    """An NCCLProcessGroup over the stand-in libnccl and a stand-in CUDA runtime."""
    import tessera.cuda as tcuda
    from tessera import _C
    from tessera.distributed import HashStore
    fake = _FakeCuda()
    monkeypatch.setattr(_C, "_cuda", fake)
    monkeypatch.setattr(tcuda, "_c", fake)
    monkeypatch.setattr(tcuda, "is_available", lambda: True)
    monkeypatch.setattr(tcuda, "set_device", lambda d: None)
    monkeypatch.setattr(tcuda, "current_device", lambda: 0)
    monkeypatch.setattr(tcuda, "device_count", lambda: 1)
    monkeypatch.delenv("TORCH_NCCL_BLOCKING_WAIT", raising=False)
    monkeypatch.setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2")

    def make(timeout):
        return nb.NCCLProcessGroup.create(HashStore(), 0, 1, timeout)
    yield make, fake
    for g in list(nb._LIVE_GROUPS):
        g.shutdown()


def test_nccl_group_watches_its_collectives_and_aborts(nccl_group, stub):
    from tessera.distributed import ReduceOp
    make, fake = nccl_group
    pg = make(1.0)
    w = pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    assert len(pg._inflight) == 1 and w._seq == 1
    fake.finish_all()
    assert _until(lambda: not pg._inflight)   # the watchdog drops completed collectives
    assert pg._error is None
    w.wait()
    stuck = pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    assert _until(lambda: pg._error is not None), "the watchdog did not fail the group"
    assert "all_reduce (sequence number 2, 4 elements of float32, cuda:0)" in str(pg._error)
    assert stub.stub_last_aborted() == 0x1000 and not pg.comm     # ncclCommAbort, once
    with pytest.raises(DistBackendError, match="sequence number 2"):
        stuck.wait()
    with pytest.raises(DistBackendError, match="can no longer be used"):
        pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    pg.shutdown()                         # an aborted group is not destroyed again
    assert 0xABC not in fake.destroyed_streams   # communication streams are never destroyed


def test_nccl_work_wait_with_a_timeout_raises_and_aborts(nccl_group, stub):
    import datetime
    make, fake = nccl_group
    pg = make(60)
    w = pg.broadcast(_FakeTensor(), 0)
    t0 = time.monotonic()
    with pytest.raises(DistBackendError, match=r"did not complete within 0.2 s \(Work.wait\)"):
        w.wait(timeout=datetime.timedelta(seconds=0.2))
    assert 0.2 <= time.monotonic() - t0 < 3
    assert pg._error is not None and stub.stub_last_aborted() == 0x1000


def test_nccl_exit_aborts_live_groups_then_frees_events(nccl_group, stub, capfd):
    from tessera.distributed import ReduceOp
    make, fake = nccl_group
    pg = make(60)
    w = pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    fake.finish_all()
    nb._at_exit()
    assert stub.stub_last_aborted() == 0x1000 and not pg.comm
    assert w._event is None and fake.destroyed_events          # released after the abort
    assert "has NOT been destroyed" in capfd.readouterr().err


def test_nccl_work_is_freed_by_reference_counting(nccl_group):
    """A Work dropped after wait() releases its event at once (no reference cycle that only
    the garbage collector would break, leaving CUDA events to pile up)."""
    import gc
    from tessera.distributed import ReduceOp
    make, fake = nccl_group
    pg = make(60)
    w = pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    fake.finish_all()
    w.wait()
    event = w._event
    with pg._watch_lock:
        pg._inflight.clear()
    gc.disable()
    try:
        del w
        assert event in fake.destroyed_events
    finally:
        gc.enable()


def test_the_abort_timer_aborts_while_the_main_thread_holds_the_gil(nccl_group, stub):
    """Note [Abort without the GIL]: the main thread blocks in C *holding the GIL* (as in
    .item() on a collective whose peer hangs), so the watchdog thread cannot run; the POSIX
    timer calls ncclCommAbort in C at timeout + slack (2 s), and the watchdog, once it runs
    again, fails the group without aborting a second time."""
    from tessera.distributed import ReduceOp
    make, fake = nccl_group
    pg = make(0.3)
    if pg._timer is None:
        pytest.skip("no POSIX timers here")
    pg.allreduce(_FakeTensor(), ReduceOp.SUM)
    holding = ctypes.PyDLL(None)                 # a PyDLL call keeps the GIL
    holding.usleep.argtypes = [ctypes.c_uint]
    t0 = time.monotonic()
    holding.usleep(3_000_000)
    assert stub.stub_abort_count() == 1 and stub.stub_last_aborted() == 0x1000
    assert _until(lambda: pg._error is not None)
    assert "abort timer fired" in str(pg._error) and "held the GIL" in str(pg._error)
    assert time.monotonic() - t0 < 10
    pg.shutdown()
    assert stub.stub_abort_count() == 1                    # not aborted again, not destroyed


def test_the_abort_timer_stays_quiet_when_collectives_complete(nccl_group, stub):
    from tessera.distributed import ReduceOp
    make, fake = nccl_group
    pg = make(0.1)
    if pg._timer is None:
        pytest.skip("no POSIX timers here")
    for _ in range(3):
        w = pg.allreduce(_FakeTensor(), ReduceOp.SUM)
        fake.finish_all()
        w.wait()
    assert _until(lambda: not pg._inflight)
    time.sleep(2.5)                              # past timeout + slack: nothing in flight
    assert stub.stub_abort_count() == 0 and pg._error is None and not pg._timer.armed
    pg.shutdown()


class UnblockingGroup(FakeGroup):
    """The abort ends the main thread's blocking wait, as ncclCommAbort ends the NCCL kernel a
    ts.cuda.synchronize() waits for."""

    def __init__(self, timeout):
        super().__init__(timeout)
        self.unblocked = threading.Event()

    def _abort_comm(self):
        super()._abort_comm()
        self.unblocked.set()


def test_a_wait_the_abort_ends_raises_before_the_next_statement(monkeypatch):
    # Found on 2 H200s: the error was posted after the abort, so the main thread, released
    # from its device wait by the abort, ran on and printed success before it arrived.
    monkeypatch.delenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", raising=False)
    g = UnblockingGroup(timeout=0.3)
    g.start()
    after = []
    with pytest.raises(DistBackendError):
        g.unblocked.wait(10)       # a C-level wait without the GIL, like a device sync
        after.append("ran on")     # must not run: the error is pending when the wait ends
        _wait_for_raise(10)
    assert after == []
    assert g.aborts == 1
