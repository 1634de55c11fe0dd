"""Fetchers: turn what the sampler yields into a batch, in the main process or a worker
(PyTorch's ``torch.utils.data._utils.fetch``)."""
from __future__ import annotations

import typing as _t

if _t.TYPE_CHECKING:
    from typing import Any, Callable, List

from .collate import default_collate
from .dataset import _as_samples, _BatchTuple


class MapDatasetFetcher:
    """dataset[i] for each index of a batch (or the dataset's ``__getitems__``), then
    collate_fn; without auto-collation the sampler's item is the index itself."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.collate_fn is default_collate:
            gather = getattr(self.dataset, "_tessera_gather", None)
            batch = gather(index) if gather is not None else None
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            data = getitems(index)
            if isinstance(data, _BatchTuple) and self.collate_fn is default_collate:
                return list(data)  # already stacked by the dataset
            data = _as_samples(data, len(index))
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableDatasetFetcher:
    """The next item (or the next batch_size items, collated) of the dataset's iterator;
    StopIteration once it is exhausted (or only a short batch is left with drop_last)."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data: List[Any] = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(kind: str, dataset: Any, auto_collation: bool, collate_fn: Callable,
                   drop_last: bool) -> Any:
    """The fetcher for a 'map' or 'iterable' dataset."""
    cls = IterableDatasetFetcher if kind == "iterable" else MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
