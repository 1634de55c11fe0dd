"""Leak checks: 100,000 interop round trips and small-op calls leave resident memory flat.

Each loop runs a warm-up first (allocator caches, interned objects, lazily built tables), then
measures RSS (from /proc/self/statm) around the timed loop. A leak of even one small object per
iteration (a DLPack manager context, a shape array, a Storage) would show as megabytes here.
"""
from __future__ import annotations

import gc
import os
from typing import Callable

import numpy as np
import pytest
import torch

import tessera as ts

N = 100_000
SLACK = 5 * 1024 * 1024  # bytes
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def growth(step: Callable[[], object], n: int = N) -> int:
    """Bytes of RSS growth over `n` calls of `step`, after a warm-up of n // 10 calls."""
    for _ in range(n // 10):
        step()
    gc.collect()
    before = rss()
    for _ in range(n):
        step()
    gc.collect()
    return rss() - before


pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")


def test_growth_detects_a_leak():
    """The measurement itself can fail: a deliberate leak of 100 bytes per call shows up."""
    hoard = []
    assert growth(lambda: hoard.append(bytearray(100))) > SLACK


def test_ts_torch_ts_round_trips():
    t = ts.zeros(256)  # 1 KiB: a leaked storage or pinned producer would be 100 MB

    def step():
        back = ts.from_dlpack(torch.from_dlpack(t))
        assert back.data_ptr() == t.data_ptr()

    assert growth(step) < SLACK


def test_fresh_tensor_round_trips_release_memory():
    def step():
        ts.from_dlpack(torch.from_dlpack(ts.zeros(64)))
        ts.from_dlpack(torch.zeros(64))

    assert growth(step) < SLACK


def test_ts_numpy_ts_round_trips():
    t = ts.zeros(256)

    def step():
        ts.from_dlpack(np.from_dlpack(t))
        ts.asarray(np.asarray(t))

    assert growth(step) < SLACK


def test_unconsumed_capsules_and_buffers():
    t = ts.zeros(16)

    def step():
        t.__dlpack__(max_version=(1, 0))
        t.__dlpack__()
        memoryview(t).release()

    assert growth(step) < SLACK


def test_small_ops():
    a = ts.asarray([1.0, 2.0, 3.0, 4.0])
    b = ts.asarray([4.0, 3.0, 2.0, 1.0])

    def step():
        a + b
        a * 2.0
        ts.asarray([1.0, 2.0])

    assert growth(step) < SLACK
