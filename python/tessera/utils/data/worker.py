"""DataLoader worker processes: the loop each worker runs and what it can learn about
itself through :func:`get_worker_info` (PyTorch's ``torch.utils.data._utils.worker``)."""
from __future__ import annotations

import os as _os
import pickle as _pickle
import queue as _queue
import random as _random
import sys as _sys
import traceback as _traceback
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Optional

import numpy as _np

from .fetch import create_fetcher

# How often (seconds) a blocked worker or main process wakes up to check that its peer lives.
STATUS_CHECK_INTERVAL = 0.5


class WorkerInfo:
    """Read-only facts about the current worker: id, num_workers, seed, dataset (the
    worker's own copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        return super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: Optional[WorkerInfo] = None


def get_worker_info() -> Optional[WorkerInfo]:
    """The :class:`WorkerInfo` of this DataLoader worker process, or None in the main
    process. An IterableDataset uses it to split its stream between workers."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback and
    re-raised there with the same type."""

    def __init__(self, exc_info: Any, where: str) -> None:
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(_traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """Keeps KeyError's message readable (KeyError repr()s its argument)."""

    def __repr__(self) -> str:
        return self


class IterableDatasetStopIteration:
    """A worker's answer once its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers at the start of a new epoch (answered in kind)."""


def pack(data: Any, worker_id: int) -> bytes:
    """`data` pickled here in the worker, so that a batch that cannot be pickled becomes an
    error the main process sees (mp.Queue would drop it silently in its feeder thread)."""
    try:
        return _pickle.dumps(data, protocol=_pickle.HIGHEST_PROTOCOL)
    except Exception:
        if not isinstance(data, ExceptionWrapper):
            data = ExceptionWrapper(_sys.exc_info(), where=f"in DataLoader worker process "
                                    f"{worker_id} while sending a batch")
    try:
        return _pickle.dumps(data, protocol=_pickle.HIGHEST_PROTOCOL)
    except Exception:  # the exception type itself cannot be pickled (e.g. a local class)
        data.exc_type = RuntimeError
        return _pickle.dumps(data, protocol=_pickle.HIGHEST_PROTOCOL)


def _seed_worker(seed: int, worker_id: int) -> None:
    """Seeds Python's, NumPy's and tessera's global generators from the worker's seed."""
    _random.seed(seed)
    _np.random.seed(_np.random.SeedSequence([seed & 0xFFFFFFFFFFFFFFFF, worker_id])
                   .generate_state(1)[0])
    from ...random import manual_seed
    manual_seed(seed & 0xFFFFFFFFFFFFFFFF)


def worker_loop(dataset_kind: str, dataset: Any, index_queue: Any, data_queue: Any,
                done_event: Any, fetcher_args: tuple, base_seed: int,
                init_fn: Optional[Callable[[int], None]], worker_id: int, num_workers: int,
                parent_pid: int) -> None:
    """Answers (task id, indices) requests from index_queue with (task id, batch) on
    data_queue until it receives None; exceptions travel back as ExceptionWrapper."""
    global _worker_info
    try:
        import tessera
        tessera.set_num_threads(1)  # workers are the parallelism; avoid oversubscription
        seed = base_seed + worker_id
        _seed_worker(seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, *fetcher_args)
        except Exception:
            init_error = ExceptionWrapper(_sys.exc_info(),
                                          where=f"in DataLoader worker process {worker_id}")
        ended = False
        while True:
            try:
                r = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except _queue.Empty:
                if _os.getppid() != parent_pid:
                    return  # the main process died: nobody will read our answers
                if done_event.is_set():
                    break  # shutting down, but our None was lost (a queue finalized early)
                continue
            if isinstance(r, ResumeIteration):
                data_queue.put((r, None))
                ended = False
                if init_error is None:
                    fetcher = create_fetcher(dataset_kind, dataset, *fetcher_args)
                continue
            if r is None:
                break
            if done_event.is_set() or ended:
                continue
            idx, index = r
            data: Any
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != "iterable":
                        data = ExceptionWrapper(_sys.exc_info(), where=f"in DataLoader worker "
                                                f"process {worker_id}")
                    else:
                        data = IterableDatasetStopIteration(worker_id)
                        ended = True
                except Exception:
                    data = ExceptionWrapper(_sys.exc_info(),
                                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, pack(data, worker_id)))
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
