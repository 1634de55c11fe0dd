"""Datasets, samplers and DataLoader with PyTorch's ``torch.utils.data`` semantics.

    >>> ds = TensorDataset(ts.arange(10.0).reshape(5, 2), ts.arange(5))
    >>> x, y = next(iter(DataLoader(ds, batch_size=2, shuffle=True)))
    >>> x.shape, y.dtype
    ((2, 2), tessera.int64)

Randomness (shuffle, random samplers, random_split) comes from ``generator=`` (a
ts.random.Generator, also exported here as ``Generator``) or the global generator seeded by
``ts.manual_seed``. A DataLoader over a TensorDataset (or a Subset of one) gathers each batch
with one indexing op per tensor instead of stacking samples one by one."""
from .collate import default_collate, default_collate_fn_map, default_convert
from .dataloader import DataLoader
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,
                      TensorDataset, _BatchTuple, random_split)
from .distributed import DistributedSampler
from .sampler import (BatchSampler, Generator, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)
from .worker import WorkerInfo, get_worker_info

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "Generator", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler", "TensorDataset",
           "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_collate_fn_map", "default_convert", "get_worker_info", "random_split"]
from . import _utils  # noqa: E402,F401  (PyTorch-style private import paths)
