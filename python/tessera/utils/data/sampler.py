"""Samplers (PyTorch's ``torch.utils.data.sampler`` semantics): iterables of dataset indices
(or of index lists, for BatchSampler). Randomness comes from ``ts.random``: a sampler's
``generator=`` (a ts.random.Generator) or the global generator seeded by ts.manual_seed."""
from __future__ import annotations

import itertools as _itertools
import typing as _t
import warnings as _warnings

if _t.TYPE_CHECKING:
    from typing import Any, Iterable, Iterator, List, Optional, Sequence, Sized

from ...random import Generator
from ._errors import DataRuntimeError

_T_co = _t.TypeVar("_T_co", covariant=True)


def _random() -> Any:
    from ... import random
    return random


def _randperm(n: int, generator: Optional[Generator]) -> List[int]:
    """A uniform permutation of range(n) as a list of Python ints."""
    return _random().randperm(n, generator=generator).tolist()


def _randint(high: int, size: int, generator: Optional[Generator]) -> List[int]:
    """`size` uniform integers in [0, high)."""
    if size == 0:
        return []
    if high <= 0:
        raise DataRuntimeError(f"random_ expects 'from' to be less than 'to', but got from=0 >= "
                               f"to={high} (sampling indices of an empty data source)")
    return _random().randint(0, high, (size,), generator=generator).tolist()


def _own_generator() -> Generator:
    """A fresh generator seeded by one draw from the global one (PyTorch's RandomSampler
    does this, so the global RNG's use between two items cannot change an epoch's order)."""
    seed = int(_random().randint(0, 2 ** 63 - 1, ()).item())
    return Generator(seed)


# Note [Lazy sampling]: samplers are generators that draw their random numbers in bounded
# chunks as they are consumed (PyTorch's RandomSampler draws 32 at a time with replacement and
# one permutation per epoch without), so num_samples=10**10 costs nothing until iterated and
# memory stays bounded by the chunk (or by len(data_source)) however many items are drawn.
_CHUNK = 32
_WEIGHTED_CHUNK = 4096


class Sampler(_t.Generic[_T_co]):
    """Base class of samplers: define ``__iter__`` (and ``__len__`` when it is known)."""

    def __init__(self, data_source: Optional[Sized] = None) -> None:
        if data_source is not None:
            _warnings.warn("`data_source` argument is not used and will be removed in 2.2.0."
                          "You may still have custom implementation that utilizes it.",
                          UserWarning, stacklevel=2)

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Without replacement: whole random permutations (then part of one) until num_samples
    indices were given; with replacement: num_samples uniform draws. num_samples defaults
    to len(data_source); a new order each time it is iterated."""

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: Optional[int] = None, generator: Optional[Generator] = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _own_generator()
        if self.replacement:  # Note [Lazy sampling]
            for _ in range(self.num_samples // _CHUNK):
                yield from _randint(n, _CHUNK, generator)
            yield from _randint(n, self.num_samples % _CHUNK, generator)
        else:
            for _ in range(self.num_samples // n):
                yield from _randperm(n, generator)
            yield from _randperm(n, generator)[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (a new one per iteration)."""

    def __init__(self, indices: Sequence[int], generator: Optional[Generator] = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices in [0, len(weights)) drawn with probability proportional to
    `weights` (with replacement by default)."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Optional[Generator] = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        from ... import asarray, float64
        w = asarray(weights, dtype=float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        n = self.weights.shape[0]
        if not self.replacement and self.num_samples > n:
            raise DataRuntimeError("cannot sample n_sample > prob_dist.size(-1) samples "
                                   "without replacement")
        if self.replacement:  # Note [Lazy sampling]: independent draws, taken in chunks
            left = self.num_samples
            while left > 0:
                k = min(left, _WEIGHTED_CHUNK)
                yield from self._draw(k, True)
                left -= k
            return
        weights = self.weights.tolist()
        positive = sum(1 for w in weights if w > 0)
        # Without replacement PyTorch takes the zero-weight categories last, once the others
        # are exhausted; ts.random.multinomial refuses, so draw those separately.
        extra = max(self.num_samples - positive, 0)
        if positive == 0:
            raise DataRuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        yield from self._draw(self.num_samples - extra, False)
        if extra > 0:
            zeros = [i for i, w in enumerate(weights) if w == 0]
            yield from [zeros[i] for i in _randperm(len(zeros), self.generator)[:extra]]

    def _draw(self, k: int, replacement: bool) -> List[int]:
        try:
            return _random().multinomial(self.weights, k, replacement,
                                         generator=self.generator).tolist()
        except ValueError as e:  # PyTorch's multinomial reports bad weights as RuntimeError
            raise DataRuntimeError(f"invalid multinomial distribution: {e}") from None

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[_t.List[int]]):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[List[int]]:
        it = iter(self.sampler)
        batch = list(_itertools.islice(it, self.batch_size))
        while batch:
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch
            batch = list(_itertools.islice(it, self.batch_size))

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler[None]):
    """None forever: the 'indices' of an IterableDataset (its fetcher ignores them)."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None
