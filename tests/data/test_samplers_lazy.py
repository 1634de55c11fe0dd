"""Samplers draw lazily (Note [Lazy sampling] in utils/data/sampler.py), as PyTorch's do:
num_samples=10**10 must cost nothing until iterated, the first items must come at once and
memory must stay bounded. Errors come when PyTorch's come (on the first item), with its classes.
"""
import itertools
import time
import tracemalloc
import types

import pytest
import torch
import torch.utils.data as pdata

import tessera as ts
import tessera.utils.data as tdata

HUGE = 10 ** 10


def _first(sampler, k=100):
    t0 = time.perf_counter()
    tracemalloc.start()
    items = list(itertools.islice(iter(sampler), k))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return items, time.perf_counter() - t0, peak


@pytest.mark.parametrize("make", [
    lambda m, g: m.RandomSampler(range(10), replacement=True, num_samples=HUGE, generator=g),
    lambda m, g: m.RandomSampler(range(10), replacement=False, num_samples=HUGE, generator=g),
    lambda m, g: m.WeightedRandomSampler([0.1, 0.5, 2.0, 1.0], HUGE, generator=g),
    lambda m, g: m.BatchSampler(m.RandomSampler(range(7), True, HUGE, generator=g), 4, False),
    lambda m, g: m.BatchSampler(m.RandomSampler(range(7), True, HUGE, generator=g), 4, True),
], ids=["random-replacement", "random-permutations", "weighted", "batch", "batch-drop-last"])
def test_huge_num_samples_is_lazy(make):
    s = make(tdata, ts.random.Generator(0))
    assert len(s) in (HUGE, HUGE // 4, -(-HUGE // 4))
    items, seconds, peak = _first(s)
    assert len(items) == 100
    assert seconds < 1.0 and peak < 4 << 20, (seconds, peak)
    # PyTorch's RandomSampler, BatchSampler are lazy too; the same length answers
    if not isinstance(s, tdata.WeightedRandomSampler):   # torch's draws all 10**10 at once
        assert len(make(pdata, torch.Generator().manual_seed(0))) == len(s)


def test_random_sampler_with_replacement_draws_32_at_a_time():
    """Torch's chunking: the generator advances by 32-draw chunks, so a stream cut after 40
    items equals the first 40 of a longer one (same seed)."""
    a = list(tdata.RandomSampler(range(100), True, 40, ts.random.Generator(3)))
    b = list(itertools.islice(tdata.RandomSampler(range(100), True, HUGE, ts.random.Generator(3)), 40))
    assert a[:32] == b[:32]
    assert all(0 <= i < 100 for i in b)


def test_weighted_chunks_have_the_distribution():
    w = [1.0, 3.0, 0.0, 4.0]
    s = tdata.WeightedRandomSampler(w, 20000, generator=ts.random.Generator(1))
    counts = [0] * 4
    for i in s:
        counts[i] += 1
    assert counts[2] == 0
    for c, p in zip(counts, [1 / 8, 3 / 8, 0, 4 / 8]):
        assert abs(c / 20000 - p) < 0.02


def test_iterators_are_generators_and_errors_are_lazy():
    """Like torch, iter() never raises; the first next() does."""
    for m in (tdata, pdata):
        it = iter(m.WeightedRandomSampler([1.0, -1.0], 2))
        assert isinstance(it, types.GeneratorType)
        with pytest.raises(RuntimeError):
            next(it)
        it = iter(m.RandomSampler(range(0), replacement=True, num_samples=5))
        assert isinstance(it, types.GeneratorType)
        with pytest.raises(RuntimeError):
            next(it)
        it = iter(m.RandomSampler(range(0), num_samples=5))
        with pytest.raises(ZeroDivisionError):
            next(it)


@pytest.mark.parametrize("weights,n,repl", [
    ([0.0, 0.0], 2, False), ([0.0, 0.0], 2, True), ([1.0, float("nan")], 2, True),
    ([1.0, float("inf")], 2, True), ([], 2, True), ([1.0, 0.0, 2.0], 4, False),
    ([1.0, -1.0], 1, False)])
def test_weighted_errors_match_torch(weights, n, repl):
    with pytest.raises(RuntimeError):
        list(pdata.WeightedRandomSampler(weights, n, repl))
    with pytest.raises(RuntimeError, match="multinomial|n_sample"):
        list(tdata.WeightedRandomSampler(weights, n, repl))


def test_weighted_without_replacement_takes_zero_weights_last():
    for m, g in ((tdata, ts.random.Generator(0)), (pdata, torch.Generator().manual_seed(0))):
        out = list(m.WeightedRandomSampler([1.0, 0.0, 2.0, 0.0], 4, False, generator=g))
        assert sorted(out[:2]) == [0, 2] and sorted(out[2:]) == [1, 3]


def test_global_rng_between_items_does_not_change_the_epoch():
    """generator=None: one draw from the global generator seeds the epoch (torch's rule), so
    using the global RNG while iterating leaves the order unchanged."""
    ts.manual_seed(11)
    quiet = list(tdata.RandomSampler(range(50), True, 100))
    ts.manual_seed(11)
    noisy = []
    for i in tdata.RandomSampler(range(50), True, 100):
        ts.random.rand(3)
        noisy.append(i)
    assert noisy == quiet


def test_dataloader_over_huge_sampler_starts_at_once():
    ds = tdata.TensorDataset(ts.arange(20.0))
    loader = tdata.DataLoader(ds, batch_size=4,
                              sampler=tdata.RandomSampler(ds, True, HUGE, ts.random.Generator(0)))
    assert len(loader) == HUGE // 4
    t0 = time.perf_counter()
    (batch,) = next(iter(loader))
    assert batch.shape == (4,) and time.perf_counter() - t0 < 1.0
