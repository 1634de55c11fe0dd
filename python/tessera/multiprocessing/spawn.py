"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in `nprocs` processes and re-raise a
child's exception in the parent (torch.multiprocessing.spawn's ProcessRaisedException)."""
from __future__ import annotations

import multiprocessing as _multiprocessing
import multiprocessing.connection as _connection
import signal as _signal
import traceback as _traceback
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional


class ProcessException(Exception):
    """A spawned process failed; `error_index` is its index, `pid` its process id."""

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or by a signal."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: Optional[str] = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return (type(self),
                (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name))


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent kills the others
    except Exception:
        error_queue.put(_traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes of one spawn; ``join()`` waits and re-raises the first failure."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes = processes
        self.error_queues = error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: Optional[float] = None) -> bool:
        """True once every process ended well; raises ProcessRaisedException or
        ProcessExitedException (killing the rest) when one failed."""
        if not self.sentinels:
            return True
        ready = _connection.wait(list(self.sentinels), timeout=timeout)
        failed = -1
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                failed = i
                break
        if failed < 0:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        p = self.processes[failed]
        q = self.error_queues[failed]
        if q.empty():
            code = p.exitcode
            if code < 0:
                name = _signal.Signals(-code).name
                raise ProcessExitedException(
                    f"process {failed} terminated with signal {name}", error_index=failed,
                    error_pid=p.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(
                f"process {failed} terminated with exit code {code}", error_index=failed,
                error_pid=p.pid, exit_code=code)
        msg = f"\n\n-- Process {failed} terminated with the following error:\n" + q.get()
        raise ProcessRaisedException(msg, failed, p.pid)


def start_processes(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> Optional[ProcessContext]:
    """Starts `nprocs` processes running ``fn(i, *args)``; with `join`, waits for them (and
    returns None), else returns their ProcessContext."""
    ctx = _multiprocessing.get_context(start_method)
    processes, error_queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        error_queues.append(q)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
          join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> Optional[ProcessContext]:
    """torch.multiprocessing.spawn: `nprocs` processes (start method spawn) running
    ``fn(i, *args)``; a child's exception is re-raised as ProcessRaisedException."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
