"""Datasets (PyTorch's ``torch.utils.data.dataset`` semantics): map-style and iterable
datasets, TensorDataset, ConcatDataset, ChainDataset, StackDataset, Subset, random_split."""
from __future__ import annotations

import bisect as _bisect
import itertools as _itertools
import math as _math
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as _np

from ..._C import Tensor
from ._errors import DataAssertionError, DataIndexError

_T = _t.TypeVar("_T")


def _ts() -> Any:
    import tessera
    return tessera


class Dataset(_t.Generic[_T]):
    """Map-style dataset: define ``__getitem__(i)`` (and usually ``__len__``).
    ``a + b`` concatenates two datasets into a :class:`ConcatDataset`."""

    def __getitem__(self, index: Any) -> _T:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset[_T]") -> "ConcatDataset[_T]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T]):
    """A dataset that is a stream: define ``__iter__``. With ``num_workers > 0`` every worker
    iterates its own copy; split the stream with :func:`get_worker_info` to avoid
    duplicates. ``a + b`` chains two streams into a :class:`ChainDataset`."""

    def __iter__(self) -> Iterator[_T]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset[_T]) -> "ChainDataset":  # type: ignore[override]
        return ChainDataset([self, other])


class TensorDataset(Dataset[_t.Tuple[Tensor, ...]]):
    """Sample i is ``tuple(t[i] for t in tensors)``; all tensors share their first dimension.
    A DataLoader over it gathers a whole batch with one indexing op per tensor."""

    def __init__(self, *tensors: Any) -> None:
        from ...nn.modules.module import to_tensor
        self.tensors = tuple(to_tensor(t) for t in tensors)
        if any(t.ndim == 0 for t in self.tensors):
            raise DataIndexError("TensorDataset: dimension specified as 0 but a tensor has no "
                                 f"dimensions (shapes {[tuple(t.shape) for t in self.tensors]})")
        if self.tensors and any(t.shape[0] != self.tensors[0].shape[0] for t in self.tensors):
            raise DataAssertionError("Size mismatch between tensors: TensorDataset tensors must "
                                     "share their first dimension (size mismatch in shapes "
                                     f"{[tuple(t.shape) for t in self.tensors]})")

    def __getitem__(self, index: Any) -> Tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _tessera_gather(self, indices: Sequence[int]) -> Optional[List[Tensor]]:
        """What ``default_collate([self[i] for i in indices])`` returns (a list, one stacked
        tensor per member), computed with one gather per tensor; None when a subclass
        defines its own ``__getitem__`` or ``__getitems__`` (which DataLoader must call)."""
        if type(self).__getitem__ is not TensorDataset.__getitem__ or not self.tensors or \
                getattr(type(self), "__getitems__", None) is not None:
            return None
        n = len(self)
        try:
            idx = _np.asarray(indices)
        except (TypeError, ValueError):
            return None
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            return None  # e.g. float or tensor indices: item by item, as PyTorch does
        idx = idx.astype(_np.int64)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            bad = int(idx[(idx < -n) | (idx >= n)][0])
            raise IndexError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        rows = _ts().asarray(idx)
        return [t[rows] for t in self.tensors]


class ConcatDataset(Dataset[_T]):
    """The datasets one after another; ``cumulative_sizes[k]`` is the total length of the
    first k+1 datasets."""

    datasets: List[Dataset[_T]]
    cumulative_sizes: List[int]

    @staticmethod
    def cumsum(sequence: Iterable[Any]) -> List[int]:
        r, s = [], 0
        for e in sequence:
            s += len(e)
            r.append(s)
        return r

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise DataAssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise DataAssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> _T:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = _bisect.bisect_right(self.cumulative_sizes, idx)
        if k == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} out of range for {len(self)} samples")
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]

    @property
    def cummulative_sizes(self) -> List[int]:
        """Old misspelled name of :attr:`cumulative_sizes` (kept as PyTorch does)."""
        _warnings.warn("cummulative_sizes attribute is renamed to cumulative_sizes",
                      DeprecationWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """Iterable datasets chained on the fly (each is iterated when its turn comes)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DataAssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise DataAssertionError("ChainDataset only supports IterableDataset")
            total += len(d)  # type: ignore[arg-type]
        return total


class StackDataset(Dataset[_T]):
    """Datasets of one length zipped: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]}``."""

    datasets: Union[Tuple[Dataset, ...], Dict[str, Dataset]]

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            members: List[Dataset] = list(args)
            self.datasets = args
        elif kwargs:
            members = list(kwargs.values())
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")
        self._length = len(members[0])  # type: ignore[arg-type]
        if any(self._length != len(d) for d in members):  # type: ignore[arg-type]
            raise ValueError("Size mismatch between datasets")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: List[int]) -> List[Any]:
        """The samples at `indices`, using each member's ``__getitems__`` when it has one."""
        named = self.datasets.items() if isinstance(self.datasets, dict) \
            else enumerate(self.datasets)
        columns = []
        for key, d in named:
            if callable(getattr(d, "__getitems__", None)):
                items = _as_samples(d.__getitems__(indices), len(indices))
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch. "
                                     f"Expected {len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            columns.append((key, items))
        if isinstance(self.datasets, dict):
            return [{k: items[j] for k, items in columns} for j in range(len(indices))]
        return [tuple(items[j] for _, items in columns) for j in range(len(indices))]

    def __len__(self) -> int:
        return self._length


class Subset(Dataset[_T]):
    """The samples of `dataset` at `indices` (kept as given)."""

    def __init__(self, dataset: Dataset[_T], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: List[int]) -> Any:
        """The samples at `indices`, through the parent's ``__getitems__`` when it has one."""
        inner = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(inner)  # type: ignore[attr-defined]
        return [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)

    def _tessera_gather(self, indices: Sequence[int]) -> Optional[List[Tensor]]:
        """The collated batch from the parent's vectorized gather, if it has one."""
        if type(self).__getitem__ is not Subset.__getitem__ or \
                type(self).__getitems__ is not Subset.__getitems__:
            return None
        gather = getattr(self.dataset, "_tessera_gather", None)  # checks its own overrides
        return None if gather is None else gather([self.indices[i] for i in indices])


def random_split(dataset: Dataset[_T], lengths: Sequence[Union[int, float]],
                 generator: Any = None) -> List[Subset[_T]]:
    """Splits `dataset` into non-overlapping random Subsets of the given lengths, or of the
    given fractions when they sum to 1 (floor(n * f) each, the remainder handed out one by
    one from the first split on, as PyTorch does). `generator` is a ts.random.Generator
    (default: the global one, seeded by ``ts.manual_seed``)."""
    n = len(dataset)  # type: ignore[arg-type]
    if _math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(int(_math.floor(n * frac)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                _warnings.warn(f"Length of split at index {i} is 0. "
                              "This might result in an empty dataset.")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    from .sampler import _randperm
    perm = _randperm(int(sum(lengths)), generator)
    return [Subset(dataset, perm[end - ln:end])
            for end, ln in zip(_itertools.accumulate(lengths), lengths)]  # type: ignore[arg-type]


class _BatchTuple(tuple):
    """What a dataset's ``__getitems__`` returns when it already stacked the batch
    (members are batched tensors, not samples); DataLoader hands it to default_collate's
    caller as a list, or splits it into samples for a custom collate_fn."""


def _as_samples(items: Any, n: int) -> Any:
    """A dataset's ``__getitems__`` answer as a list of n samples (a _BatchTuple is split)."""
    if isinstance(items, _BatchTuple):
        return [tuple(member[j] for member in items) for j in range(n)]
    return items
