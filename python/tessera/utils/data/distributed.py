"""DistributedSampler: each of num_replicas processes reads its own share of a dataset
(PyTorch's ``torch.utils.data.distributed`` semantics, padding and all)."""
from __future__ import annotations

import math as _math
import typing as _t

if _t.TYPE_CHECKING:
    from typing import Iterator, List, Optional, Sized

from .sampler import Generator, Sampler, _randperm


class DistributedSampler(Sampler[int]):
    """Indices for replica `rank` of `num_replicas`: the (shuffled with seed + epoch, or
    sequential) index list is padded by repeating its start to a multiple of num_replicas
    (or cut down to one when drop_last), then replica r takes every num_replicas-th index
    from position r. Call :meth:`set_epoch` before each epoch for a new shuffle.

    num_replicas and rank default to the world size and rank of tessera.distributed's
    default process group."""

    def __init__(self, dataset: Sized, num_replicas: Optional[int] = None,
                 rank: Optional[int] = None, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: the default process group has not been "
                                   "initialized; call tessera.distributed.init_process_group() "
                                   "or pass num_replicas= and rank=")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = _math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = _math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            indices: List[int] = _randperm(n, Generator(self.seed + self.epoch))
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * _math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"DistributedSampler: {len(indices)} indices, expected "
                                 f"{self.total_size}")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Sets the epoch whose shuffle the next iteration uses (all replicas must agree)."""
        self.epoch = epoch
