"""Datasets, samplers and DataLoader (PyTorch's ``torch.utils.data`` semantics).

A dataset may define ``__getitems__(indices)`` to return a whole batch at once (as in
PyTorch); TensorDataset does, gathering rows with NumPy so a batch costs one copy per
tensor instead of one op per sample."""
from __future__ import annotations

import bisect
import math
from typing import Any, Callable, Generic, Iterable, Iterator, List, Optional, Sequence, TypeVar, Union

import numpy as np

from .._C import Tensor

T = TypeVar("T")


def _ts() -> Any:
    import tessera
    return tessera


class Dataset(Generic[T]):
    """Map-style dataset: ``__getitem__(i)`` and ``__len__``."""

    def __getitem__(self, index: int) -> T:
        raise NotImplementedError(f"{type(self).__name__}: __getitem__ is not defined")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: define ``__iter__``."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class TensorDataset(Dataset):
    """Samples are the i-th rows of each tensor (all share their first dimension)."""

    def __init__(self, *tensors: Any) -> None:
        from ..nn.modules.module import to_tensor
        self.tensors = tuple(to_tensor(t) for t in tensors)
        if not self.tensors:
            raise ValueError("TensorDataset: at least one tensor is required")
        n = self.tensors[0].shape[0] if self.tensors[0].ndim else None
        if any(t.ndim == 0 or t.shape[0] != n for t in self.tensors):
            raise ValueError("TensorDataset: size mismatch between tensors "
                             f"{[tuple(t.shape) for t in self.tensors]}")
        self._np = [t.numpy() for t in self.tensors]

    def __getitem__(self, index: int) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices: Sequence[int]) -> tuple:
        """A whole batch: each tensor's rows at `indices`, stacked (one gather per tensor)."""
        idx = np.asarray(indices, dtype=np.int64)
        return _BatchTuple(_ts().asarray(a[idx]) for a in self._np)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class _BatchTuple(tuple):
    """Marks a batch already collated by ``__getitems__``."""


class ConcatDataset(Dataset):
    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            idx += len(self)
        if not 0 <= idx < len(self):
            raise IndexError(f"ConcatDataset: index {idx} out of range")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        prev = self.cumulative_sizes[d - 1] if d else 0
        return self.datasets[d][idx - prev]


class Subset(Dataset):
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, idx: int) -> Any:
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: Sequence[int]) -> Any:
        inner = [self.indices[i] for i in indices]
        if hasattr(self.dataset, "__getitems__"):
            return self.dataset.__getitems__(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)


class Generator:
    """A seeded source of shuffles for samplers (``generator=`` in DataLoader and
    random_split); ts.random.Generator works too when available."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)

    def manual_seed(self, seed: int) -> "Generator":
        self._rng = np.random.default_rng(seed)
        return self


def _permutation(n: int, generator: Any) -> List[int]:
    if generator is None:
        from ..nn import _rng
        return _rng.permutation(n).tolist()
    if isinstance(generator, Generator):
        return generator._rng.permutation(n).tolist()
    ts = _ts()
    if hasattr(ts, "random") and hasattr(ts.random, "randperm"):
        return ts.random.randperm(n, generator=generator).tolist()
    raise TypeError(f"unsupported generator {type(generator).__name__}")


class Sampler:
    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random permutation per epoch (or num_samples draws with replacement)."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: Optional[int] = None, generator: Any = None) -> None:
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if num_samples is not None and num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got {num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            from ..nn import _rng
            rng = self.generator._rng if isinstance(self.generator, Generator) else _rng._np_gen
            return iter(rng.integers(0, n, self.num_samples).tolist())
        out: List[int] = []
        while len(out) < self.num_samples:
            out += _permutation(n, self.generator)
        return iter(out[:self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = list(indices), generator

    def __iter__(self) -> Iterator[int]:
        return iter([self.indices[i] for i in _permutation(len(self.indices), self.generator)])

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of batch_size."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[List[int]]:
        batch: List[int] = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


def default_collate(batch: List[Any]) -> Any:
    """Stacks tensors, arrays and numbers along a new first axis; recurses into tuples,
    lists and dicts (PyTorch's rules: Python ints become int64, floats float64... as
    tessera's default float32 for floats)."""
    ts = _ts()
    elem = batch[0]
    if isinstance(elem, Tensor):
        return ts.stack(list(batch))
    if isinstance(elem, np.ndarray):
        return ts.asarray(np.stack(batch))
    if isinstance(elem, bool):
        return ts.asarray(batch, dtype=ts.bool)
    if isinstance(elem, int):
        return ts.asarray(batch, dtype=ts.int64)
    if isinstance(elem, float):
        return ts.asarray(batch, dtype=ts.float64)
    if isinstance(elem, (np.integer, np.floating, np.bool_)):
        return ts.asarray(np.array(batch))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, dict):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, (tuple, list)):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)] if isinstance(elem, list) \
            else tuple(default_collate(list(s)) for s in zip(*batch))
    raise TypeError(f"default_collate: batch must contain tensors, NumPy arrays, numbers, dicts "
                    f"or lists; found {type(elem).__name__}")


class DataLoader:
    """Iterates over a dataset in batches: ``DataLoader(ds, batch_size=64, shuffle=True)``.
    Single-process (num_workers is accepted and ignored)."""

    def __init__(self, dataset: Dataset, batch_size: Optional[int] = 1, shuffle: Optional[bool] = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Optional[Callable] = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 generator: Any = None, **kwargs: Any) -> None:
        self.dataset = dataset
        self.batch_size, self.drop_last = batch_size, drop_last
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler and batch_sampler options")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            self.batch_size, self.drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_sampler is None and self.batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(sampler, self.batch_size, drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._auto_collate = collate_fn is None
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if self.batch_size is not None or batch_sampler is not None else (lambda x: x))

    def _fetch(self, indices: List[int]) -> Any:
        if hasattr(self.dataset, "__getitems__"):
            items = self.dataset.__getitems__(indices)
            if isinstance(items, _BatchTuple):
                return tuple(items) if self._auto_collate else self.collate_fn(
                    [tuple(t[i] for t in items) for i in range(len(indices))])
            return self.collate_fn(list(items))
        return self.collate_fn([self.dataset[i] for i in indices])

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            yield from self._iter_stream()
            return
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self._fetch(list(indices))

    def _iter_stream(self) -> Iterator[Any]:
        if self.batch_size is None:
            for item in self.dataset:
                yield self.collate_fn(item)
            return
        batch: List[Any] = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)


def random_split(dataset: Dataset, lengths: Sequence[Union[int, float]],
                 generator: Any = None) -> List[Subset]:
    """Splits into non-overlapping random Subsets of the given lengths (or fractions
    summing to 1, remainders spread round-robin as PyTorch does)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and not all(
            isinstance(x, int) for x in lengths):
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _permutation(n, generator)
    out, start = [], 0
    for ln in lengths:
        out.append(Subset(dataset, perm[start:start + ln]))
        start += ln
    return out
