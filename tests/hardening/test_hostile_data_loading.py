"""Hostile data loading, fourth pass (issue 22): batches that mix tensors with other objects,
and workers that die by a signal. The worker crash and timeout cases are in
tests/data/test_data_torch_semantics.py; this file holds what the fourth pass found."""
from __future__ import annotations

import os
import signal

import pytest
import torch

import tessera as ts
from tessera.utils.data import DataLoader, Dataset, default_collate


@pytest.mark.parametrize("other", [{"a": 1}, 3, "x", None], ids=["dict", "int", "str", "None"])
def test_a_batch_of_a_tensor_and_a_non_tensor_is_a_type_error_like_torch(other) -> None:
    # Before: AttributeError "'dict' object has no attribute 'shape'" from default_collate.
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        torch.utils.data.default_collate([torch.ones(2), other])
    with pytest.raises(TypeError, match=r"default_collate: expected Tensor as element 1 .* got "
                                        + type(other).__name__):
        default_collate([ts.ones(2), other])

    class Mixed(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int):
            return ts.ones(2) if i == 0 else other
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        list(DataLoader(Mixed(), batch_size=2))


class _Segfaults(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        if i == 1:
            os.kill(os.getpid(), signal.SIGSEGV)
        return ts.tensor([i])


def test_a_worker_killed_by_a_signal_is_reported() -> None:
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly"):
        list(DataLoader(_Segfaults(), num_workers=1, timeout=30))
