"""DataLoader (PyTorch's ``torch.utils.data.DataLoader`` semantics): batches from a map-style
dataset (through a sampler and batch sampler) or an IterableDataset, in the main process or
in ``num_workers`` worker processes."""
from __future__ import annotations

import itertools as _itertools
import multiprocessing as _multiprocessing
import os as _os
import pickle as _pickle
import queue as _queue
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Callable, Iterable, List, Optional

from ._errors import DataAssertionError
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .fetch import create_fetcher
from .sampler import (BatchSampler, Generator, RandomSampler, SequentialSampler,
                      _InfiniteConstantSampler)
from .worker import (STATUS_CHECK_INTERVAL, ExceptionWrapper, IterableDatasetStopIteration,
                     ResumeIteration, worker_loop)

# Attributes that define which batches come out; PyTorch forbids changing them later.
_FROZEN_ATTRS = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                 "persistent_workers")


def _accelerator_available() -> bool:
    try:
        from ... import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


class DataLoader:
    """Iterates over `dataset` in batches.

    ``DataLoader(ds, batch_size=64, shuffle=True, num_workers=2)``: shuffle draws a new
    permutation per epoch from `generator` (a ts.random.Generator; default the global one);
    batch_size=None turns batching off (each sample goes through default_convert);
    num_workers > 0 loads in worker processes (fork on Linux), each seeded with
    base_seed + worker id and told about itself by :func:`get_worker_info`."""

    def __init__(self, dataset: Dataset, batch_size: Optional[int] = 1,
                 shuffle: Optional[bool] = None, sampler: Optional[Iterable] = None,
                 batch_sampler: Optional[Iterable] = None, num_workers: int = 0,
                 collate_fn: Optional[Callable] = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Optional[Callable[[int], None]] = None,
                 multiprocessing_context: Any = None, generator: Optional[Generator] = None, *,
                 prefetch_factor: Optional[int] = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: Optional[_BaseDataLoaderIter] = None
        self._IterableDataset_len_called: Optional[int] = None
        self.__initialized = True
        self._check_worker_number_rationality()

    def _check_worker_number_rationality(self) -> None:
        """Warns (as PyTorch does) when there are more workers than usable CPUs."""
        if not self.num_workers:
            return
        cpus = len(_os.sched_getaffinity(0)) if hasattr(_os, "sched_getaffinity") else _os.cpu_count()
        if cpus is None or self.num_workers > cpus:
            _warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is {cpus}, "
                          "which is smaller than what this DataLoader is going to create. Please "
                          "be aware that excessive worker creation might get DataLoader running "
                          "slow or even freeze, lower the worker number to avoid potential "
                          "slowness/freeze if necessary.", stacklevel=3)

    def __setattr__(self, attr: str, val: Any) -> None:
        if self.__dict__.get("_DataLoader__initialized") and attr in _FROZEN_ATTRS:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = _multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid start "
                                     f"method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = _multiprocessing.get_context(context)
            elif not isinstance(context, _multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object "
                                "or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self.__multiprocessing_context = context

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> "_BaseDataLoaderIter":
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> "_BaseDataLoaderIter":
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = self._IterableDataset_len_called = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last \
                    else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def _get_shared_seed(self) -> int:
        """A seed drawn from `generator` (or the global one) for the workers of an epoch."""
        from ... import random
        return int(random.randint(0, 2 ** 62, (), generator=self.generator).item())


class _BaseDataLoaderIter:
    """What ``iter(loader)`` returns: an iterator over one epoch's batches."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        if loader.pin_memory and not _accelerator_available():
            _warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._base_seed = loader._get_shared_seed()
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __iter__(self) -> "_BaseDataLoaderIter":
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        reported = self._IterableDataset_len_called
        if self._dataset_kind == "iterable" and reported is not None and \
                self._num_yielded > reported:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {reported} "
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been "
                   "fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker (split the "
                        "stream with get_worker_info()).")
            _warnings.warn(msg)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads every batch in the main process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Worker processes load batches: up to prefetch_factor tasks per worker are in flight,
    handed out round-robin; batches come back in sampler order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if not loader.prefetch_factor or loader.prefetch_factor <= 0:
            raise DataAssertionError("prefetch_factor must be greater than 0 for "
                                     "MultiProcessingDataLoaderIter")
        self._prefetch_factor = loader.prefetch_factor
        ctx = loader.multiprocessing_context or _multiprocessing.get_context()
        self._data_queue = ctx.Queue()
        self._done_event = ctx.Event()
        self._index_queues: List[Any] = []
        self._workers: List[Any] = []
        self._shutdown = False
        fetcher_args = (self._auto_collation, self._collate_fn, self._drop_last)
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()
                w = ctx.Process(target=worker_loop, daemon=True, args=(
                    self._dataset_kind, self._dataset, index_queue, self._data_queue,
                    self._done_event, fetcher_args, self._base_seed, loader.worker_init_fn, i,
                    self._num_workers, _os.getpid()))
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # id of the next task to hand out
        self._rcvd_idx = 0  # id of the next batch to return
        self._task_info: dict = {}  # task id -> (worker id,) or (worker id, data)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = _itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(ResumeIteration())
            pending = self._num_workers
            while pending > 0:  # drop what the last epoch left in flight
                idx, _ = self._get_data()
                if isinstance(idx, ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker]:
                break
        else:
            return  # every worker has finished its IterableDataset
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout: float = STATUS_CHECK_INTERVAL) -> Any:
        try:
            return True, self._data_queue.get(timeout=timeout)
        except _queue.Empty:
            dead = [w for i, w in enumerate(self._workers)
                    if self._workers_status[i] and not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                    from None
            return False, None

    def _get_data(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self) -> Any:
        if self._shutdown:
            raise StopIteration
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)  # its worker ran dry
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, payload = self._get_data()
            self._tasks_outstanding -= 1
            data = _pickle.loads(payload)
            if isinstance(data, IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                if not self._persistent_workers:
                    self._index_queues[data.worker_id].put(None)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self) -> None:
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for w in self._workers:
            w.join(timeout=STATUS_CHECK_INTERVAL * 5)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:
            pass
