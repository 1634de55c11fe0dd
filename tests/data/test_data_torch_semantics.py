"""ts.utils.data against torch.utils.data: the same datasets, samplers, collation and
DataLoader calls must give structurally identical results (types, dtypes, shapes, values;
exact orders where PyTorch's order is deterministic) and the same errors."""
from __future__ import annotations

import math
import os
import warnings
from collections import Counter, namedtuple
from typing import Any, Callable, Dict, List

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tessera as ts
import tessera.utils.data as tdata

torch = pytest.importorskip("torch")
import torch.utils.data as pdata  # noqa: E402

Point = namedtuple("Point", "x y")


# ---------------------------------------------------------------- comparison helpers
def norm(x: Any) -> Any:
    """A library-neutral description of a (nested) result: tensors become
    ('T', dtype, shape, values); containers keep their kind."""
    if isinstance(x, torch.Tensor):
        return ("T", str(x.dtype).replace("torch.", ""), tuple(x.shape), x.tolist())
    if isinstance(x, ts.Tensor):
        return ("T", str(x.dtype).replace("tessera.", ""), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return ("dict", {k: norm(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(norm(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.tolist())
    return ("py", type(x).__name__, x)


def same(got: Any, want: Any) -> None:
    assert norm(got) == norm(want)


def both_raise(fn_ts: Callable[[], Any], fn_torch: Callable[[], Any], same_message: bool = True):
    """Both calls raise; the tessera exception is an instance of torch's type."""
    with pytest.raises(Exception) as want:
        fn_torch()
    with pytest.raises(type(want.value)) as got:
        fn_ts()
    if same_message:
        assert str(got.value) == str(want.value)
    return got.value, want.value


def mk(lib: Any, a: Any) -> Any:
    """A tensor of `lib` from a NumPy array."""
    return torch.as_tensor(np.asarray(a)) if lib is torch else ts.asarray(np.asarray(a))


# ---------------------------------------------------------------- default_collate / convert
SAMPLES: Dict[str, Callable[[Any], List[Any]]] = {
    "tensors": lambda m: [mk(m, np.arange(6, dtype=np.float32).reshape(2, 3) + i) for i in range(3)],
    "0d tensors": lambda m: [mk(m, np.int32(i)) for i in range(4)],
    "floats": lambda m: [0.5, 1.5, -2.0],
    "ints": lambda m: [1, 2, 3],
    "bools": lambda m: [True, False],
    "ints then float": lambda m: [1, 2.5],
    "strings": lambda m: ["a", "bc"],
    "bytes": lambda m: [b"a", b"b"],
    "numpy arrays": lambda m: [np.arange(4, dtype=np.int16) * i for i in range(3)],
    "numpy float64": lambda m: [np.float64(1.5), np.float64(2.5)],
    "numpy float32": lambda m: [np.float32(1.5), np.float32(2.5)],
    "numpy int8": lambda m: [np.int8(1), np.int8(-2)],
    "numpy bool": lambda m: [np.bool_(True), np.bool_(False)],
    "tuples": lambda m: [(mk(m, np.ones(2) * i), i, f"s{i}") for i in range(3)],
    "lists": lambda m: [[i, float(i)] for i in range(3)],
    "dicts": lambda m: [{"x": mk(m, np.full(3, i, np.float32)), "y": i, "z": {"w": 0.5 * i}}
                        for i in range(2)],
    "namedtuples": lambda m: [Point(mk(m, np.ones(2)), i) for i in range(3)],
    "nested": lambda m: [{"a": [(i, np.float32(i))], "b": Point(i * 1.0, [f"n{i}"])}
                         for i in range(2)],
    "empty tensors": lambda m: [mk(m, np.zeros((0, 2), np.float32)) for _ in range(2)],
    "int64 tensors": lambda m: [mk(m, np.arange(2, dtype=np.int64)),
                                             mk(m, np.arange(2, dtype=np.int64))],
}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_default_collate_matches_torch(name: str) -> None:
    same(tdata.default_collate(SAMPLES[name](ts)), pdata.default_collate(SAMPLES[name](torch)))


@pytest.mark.parametrize("name", list(SAMPLES))
def test_default_convert_matches_torch(name: str) -> None:
    for got, want in zip(SAMPLES[name](ts), SAMPLES[name](torch)):
        same(tdata.default_convert(got), pdata.default_convert(want))


def test_default_convert_structures() -> None:
    data = {"a": np.arange(3), "b": (np.float32(2.0), "s", 3), "c": [np.array(["x"])],
            "d": Point(np.ones(2), 1.5)}
    same(tdata.default_convert(data), pdata.default_convert(data))
    assert tdata.default_convert(7) == 7 and tdata.default_convert("s") == "s"
    t = ts.ones(2)
    assert tdata.default_convert(t) is t


def test_default_collate_errors_match_torch() -> None:
    both_raise(lambda: tdata.default_collate([[1, 2], [3]]),
               lambda: pdata.default_collate([[1, 2], [3]]))
    got, _ = both_raise(lambda: tdata.default_collate([ts.ones(2), ts.ones(3)]),
                        lambda: pdata.default_collate([torch.ones(2), torch.ones(3)]),
                        same_message=False)
    assert isinstance(got, RuntimeError) and "equal size" in str(got)
    both_raise(lambda: tdata.default_collate([object()]), lambda: pdata.default_collate([object()]))
    both_raise(lambda: tdata.default_collate([np.array(["a"])]),
               lambda: pdata.default_collate([np.array(["a"])]))
    both_raise(lambda: tdata.default_collate([None, None]),
               lambda: pdata.default_collate([None, None]))


def test_collate_with_custom_map() -> None:
    cmap = dict(tdata.default_collate_fn_map)
    cmap[str] = lambda batch, *, collate_fn_map=None: "|".join(batch)
    assert tdata._utils.collate.collate([("a", 1), ("b", 2)], collate_fn_map=cmap)[0] == "a|b"


# ---------------------------------------------------------------- datasets
def _range_class(lib: Any) -> type:
    class Range(lib.Dataset):
        """i + offset for i in range(n)."""

        def __init__(self, n: int, offset: int = 0) -> None:
            self.n, self.offset = n, offset

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, i: int) -> int:
            if not 0 <= i < self.n:
                raise IndexError(f"Range index {i} out of range")
            return i + self.offset
    return Range


def _stream_class(lib: Any) -> type:
    class Stream(lib.IterableDataset):
        """range(start, stop); with workers, split between them when `split`."""

        def __init__(self, start: int, stop: int, split: bool = False) -> None:
            self.start, self.stop, self.split = start, stop, split

        def __iter__(self):
            lo, hi = self.start, self.stop
            info = lib.get_worker_info()
            if self.split and info is not None:
                per = int(math.ceil((hi - lo) / info.num_workers))
                lo = lo + info.id * per
                hi = min(lo + per, hi)
            return iter(range(lo, hi))

        def __len__(self) -> int:
            return self.stop - self.start
    return Stream


def _no_len_stream_class(lib: Any) -> type:
    class NoLenStream(lib.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return NoLenStream


Range, PRange = _range_class(tdata), _range_class(pdata)
Stream, PStream = _stream_class(tdata), _stream_class(pdata)
NoLenStream, PNoLenStream = _no_len_stream_class(tdata), _no_len_stream_class(pdata)


def test_concat_dataset_matches_torch() -> None:
    sizes = [3, 0, 4, 2]
    t = tdata.ConcatDataset([Range(n, 10 * k) for k, n in enumerate(sizes)])
    p = pdata.ConcatDataset([PRange(n, 10 * k) for k, n in enumerate(sizes)])
    assert t.cumulative_sizes == p.cumulative_sizes and len(t) == len(p)
    assert all(type(c) is int for c in t.cumulative_sizes)
    for i in range(-len(p), len(p)):
        assert t[i] == p[i]
    both_raise(lambda: t[-len(p) - 1], lambda: p[-len(p) - 1])
    with pytest.raises(IndexError):
        p[len(p)]
    with pytest.raises(IndexError):
        t[len(t)]
    both_raise(lambda: tdata.ConcatDataset([]), lambda: pdata.ConcatDataset([]))
    both_raise(lambda: tdata.ConcatDataset([Stream(0, 2)]), lambda: pdata.ConcatDataset([PStream(0, 2)]))
    added = Range(2) + Range(3, 100)
    assert isinstance(added, tdata.ConcatDataset) and [added[i] for i in range(5)] == [0, 1, 100, 101, 102]
    with pytest.raises(ValueError):  # tessera code may catch ValueError for bad arguments
        tdata.ConcatDataset([])


def test_dataset_base_errors_match_torch() -> None:
    both_raise(lambda: tdata.Dataset()[0], lambda: pdata.Dataset()[0])
    with pytest.raises(NotImplementedError):
        iter(tdata.IterableDataset())


def test_chain_dataset_matches_torch() -> None:
    t = tdata.ChainDataset([Stream(0, 3), Stream(10, 12)])
    p = pdata.ChainDataset([PStream(0, 3), PStream(10, 12)])
    assert list(t) == list(p) and len(t) == len(p)
    assert list(Stream(0, 2) + Stream(5, 6)) == list(PStream(0, 2) + PStream(5, 6))
    assert isinstance(Stream(0, 2) + Stream(5, 6), tdata.ChainDataset)
    both_raise(lambda: list(tdata.ChainDataset([Range(2)])), lambda: list(pdata.ChainDataset([PRange(2)])))
    both_raise(lambda: len(tdata.ChainDataset([Range(2)])), lambda: len(pdata.ChainDataset([PRange(2)])))


def test_stack_dataset_matches_torch() -> None:
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    t = tdata.StackDataset(tdata.TensorDataset(ts.asarray(xs)), Range(4))
    p = pdata.StackDataset(pdata.TensorDataset(torch.as_tensor(xs)), PRange(4))
    assert len(t) == len(p) == 4
    same(t[2], p[2])
    same(t.__getitems__([3, 0]), p.__getitems__([3, 0]))
    td = tdata.StackDataset(a=Range(3), b=Range(3, 5))
    pd = pdata.StackDataset(a=PRange(3), b=PRange(3, 5))
    same(td[1], pd[1])
    same(td.__getitems__([2, 1]), pd.__getitems__([2, 1]))
    same(list(tdata.DataLoader(td, batch_size=2)), list(pdata.DataLoader(pd, batch_size=2)))
    same(list(tdata.DataLoader(t, batch_size=3)), list(pdata.DataLoader(p, batch_size=3)))
    both_raise(lambda: tdata.StackDataset(), lambda: pdata.StackDataset())
    both_raise(lambda: tdata.StackDataset(Range(2), Range(3)), lambda: pdata.StackDataset(PRange(2), PRange(3)))
    both_raise(lambda: tdata.StackDataset(Range(2), a=Range(2)), lambda: pdata.StackDataset(PRange(2), a=PRange(2)))


def test_tensor_dataset_matches_torch() -> None:
    xs, ys = np.arange(10.0).reshape(5, 2), np.arange(5)
    t = tdata.TensorDataset(ts.asarray(xs), ts.asarray(ys))
    p = pdata.TensorDataset(torch.as_tensor(xs), torch.as_tensor(ys))
    assert len(t) == len(p)
    for i in [0, 4, -1, slice(1, 3)]:
        same(t[i], p[i])
    both_raise(lambda: tdata.TensorDataset(ts.ones((3, 2)), ts.ones(4)),
               lambda: pdata.TensorDataset(torch.ones((3, 2)), torch.ones(4)), same_message=False)
    both_raise(lambda: tdata.TensorDataset(ts.ones(3), ts.asarray(1.0)),
               lambda: pdata.TensorDataset(torch.ones(3), torch.tensor(1.0)), same_message=False)
    with pytest.raises(ValueError):  # tessera's convention for bad shapes holds too
        tdata.TensorDataset(ts.ones(3), ts.asarray(1.0))


def test_subset_matches_torch() -> None:
    t, p = tdata.Subset(Range(10), [7, 2, 5]), pdata.Subset(PRange(10), [7, 2, 5])
    assert len(t) == len(p) and [t[i] for i in range(3)] == [p[i] for i in range(3)]
    assert t.__getitems__([2, 0]) == p.__getitems__([2, 0])
    assert t[-1] == p[-1]
    xs = np.arange(20).reshape(10, 2)
    ts_sub = tdata.Subset(tdata.TensorDataset(ts.asarray(xs)), [9, 0, 4])
    pt_sub = pdata.Subset(pdata.TensorDataset(torch.as_tensor(xs)), [9, 0, 4])
    same(list(tdata.DataLoader(ts_sub, batch_size=2)), list(pdata.DataLoader(pt_sub, batch_size=2)))


@pytest.mark.parametrize("n,lengths", [
    (10, [0.5, 0.3, 0.2]), (11, [0.5, 0.5]), (7, [0.1, 0.1, 0.8]), (10, [1, 0]),
    (13, [0.3, 0.3, 0.4]), (5, [1.0]), (10, [3, 7]), (100, [0.33, 0.33, 0.34]), (3, [0.25] * 4)])
def test_random_split_lengths_match_torch(n: int, lengths: list) -> None:
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        t = tdata.random_split(Range(n), lengths, generator=ts.random.Generator(0))
    with warnings.catch_warnings(record=True) as wp:
        warnings.simplefilter("always")
        p = pdata.random_split(PRange(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in t] == [len(s) for s in p]
    assert [str(w.message) for w in wt] == [str(w.message) for w in wp]
    flat = [s[i] for s in t for i in range(len(s))]
    assert sorted(flat) == list(range(n))
    again = tdata.random_split(Range(n), lengths, generator=ts.random.Generator(0))
    assert [list(s.indices) for s in again] == [list(s.indices) for s in t]


def test_random_split_errors_and_global_seed() -> None:
    both_raise(lambda: tdata.random_split(Range(10), [3, 3]), lambda: pdata.random_split(PRange(10), [3, 3]))
    both_raise(lambda: tdata.random_split(Range(10), [1.5, -0.5]),
               lambda: pdata.random_split(PRange(10), [1.5, -0.5]))
    ts.manual_seed(5)
    a = [list(s.indices) for s in tdata.random_split(Range(9), [4, 5])]
    ts.manual_seed(5)
    assert [list(s.indices) for s in tdata.random_split(Range(9), [4, 5])] == a


# ---------------------------------------------------------------- samplers
def test_sequential_and_batch_sampler_match_torch() -> None:
    assert list(tdata.SequentialSampler(Range(5))) == list(pdata.SequentialSampler(PRange(5)))
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True), (0, 2, False)]:
        t = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
        p = pdata.BatchSampler(pdata.SequentialSampler(range(n)), bs, drop)
        assert list(t) == list(p) and len(t) == len(p)
    for bs, drop in [(0, False), (-1, False), (True, False), (2.0, False), (2, 1), (2, None)]:
        both_raise(lambda: tdata.BatchSampler(range(3), bs, drop), lambda: pdata.BatchSampler(range(3), bs, drop))


@pytest.mark.parametrize("n,num_samples,replacement", [
    (5, None, False), (5, 12, False), (5, 3, False), (5, None, True), (5, 70, True), (1, 4, False)])
def test_random_sampler_structure_matches_torch(n: int, num_samples: Any, replacement: bool) -> None:
    t = list(tdata.RandomSampler(Range(n), replacement, num_samples, ts.random.Generator(1)))
    p = list(pdata.RandomSampler(PRange(n), replacement, num_samples, torch.Generator().manual_seed(1)))
    assert len(t) == len(p) == len(tdata.RandomSampler(Range(n), replacement, num_samples))
    assert all(0 <= i < n for i in t) and all(type(i) is int for i in t)
    if not replacement:  # whole permutations, then a prefix of one
        for lst in (t, p):
            for k in range(0, len(lst) - len(lst) % n, n):
                assert sorted(lst[k:k + n]) == list(range(n))
            tail = lst[len(lst) - len(lst) % n:]
            assert len(set(tail)) == len(tail)
    again = list(tdata.RandomSampler(Range(n), replacement, num_samples, ts.random.Generator(1)))
    assert again == t


def test_random_sampler_errors_match_torch() -> None:
    both_raise(lambda: tdata.RandomSampler(Range(0)), lambda: pdata.RandomSampler(PRange(0)))
    both_raise(lambda: tdata.RandomSampler(Range(3), num_samples=0), lambda: pdata.RandomSampler(PRange(3), num_samples=0))
    both_raise(lambda: tdata.RandomSampler(Range(3), replacement=1), lambda: pdata.RandomSampler(PRange(3), replacement=1))


def test_random_sampler_new_order_each_epoch_and_global_seed() -> None:
    s = tdata.RandomSampler(Range(30), generator=ts.random.Generator(0))
    assert list(s) != list(s)
    ts.manual_seed(3)
    a = list(tdata.RandomSampler(Range(30)))
    ts.manual_seed(3)
    assert list(tdata.RandomSampler(Range(30))) == a


def test_subset_random_sampler_matches_torch() -> None:
    idx = [9, 3, 7, 7, 1]
    t = list(tdata.SubsetRandomSampler(idx, generator=ts.random.Generator(2)))
    p = list(pdata.SubsetRandomSampler(idx, generator=torch.Generator().manual_seed(2)))
    assert sorted(t) == sorted(p) and len(tdata.SubsetRandomSampler(idx)) == len(p)


def test_weighted_random_sampler_matches_torch() -> None:
    w = [0.0, 1.0, 3.0, 0.0, 2.0]
    for num, repl in [(50, True), (3, False), (1, True)]:
        t = list(tdata.WeightedRandomSampler(w, num, repl, generator=ts.random.Generator(0)))
        p = list(pdata.WeightedRandomSampler(w, num, repl, generator=torch.Generator().manual_seed(0)))
        assert len(t) == len(p) == num and all(type(i) is int for i in t)
        assert set(t) <= {1, 2, 4} and set(p) <= {1, 2, 4}
        if not repl:
            assert len(set(t)) == len(t) == len(set(p))
    counts = Counter(tdata.WeightedRandomSampler(w, 6000, generator=ts.random.Generator(1)))
    assert abs(counts[2] / 6000 - 0.5) < 0.05 and abs(counts[1] / 6000 - 1 / 6) < 0.05
    for args in [(w, 0), (w, True), (w, 2.0), (w, 3, 1), ([[1.0, 2.0]], 1)]:
        both_raise(lambda: tdata.WeightedRandomSampler(*args), lambda: pdata.WeightedRandomSampler(*args))
    for num in [4, 5]:  # zero-weight categories come last once the others are exhausted
        t = list(tdata.WeightedRandomSampler(w, num, False, generator=ts.random.Generator(0)))
        p = list(pdata.WeightedRandomSampler(w, num, False))
        for lst in (t, p):
            assert sorted(lst[:3]) == [1, 2, 4] and set(lst[3:]) <= {0, 3}
            assert len(set(lst)) == len(lst) == num
    both_raise(lambda: list(tdata.WeightedRandomSampler(w, 6, False)),
               lambda: list(pdata.WeightedRandomSampler(w, 6, False)))
    both_raise(lambda: list(tdata.WeightedRandomSampler([0.0, 0.0], 1)),
               lambda: list(pdata.WeightedRandomSampler([0.0, 0.0], 1)), same_message=False)
    both_raise(lambda: list(tdata.WeightedRandomSampler([-1.0, 2.0], 1)),
               lambda: list(pdata.WeightedRandomSampler([-1.0, 2.0], 1)), same_message=False)


@pytest.mark.parametrize("n", [0, 1, 5, 10, 11, 12])
@pytest.mark.parametrize("replicas", [1, 3, 4, 7])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_matches_torch(n: int, replicas: int, drop_last: bool) -> None:
    def indices(lib_data: Any, ds: Any, shuffle: bool, epoch: int = 0) -> List[List[int]]:
        out = []
        for r in range(replicas):
            s = lib_data.DistributedSampler(ds, num_replicas=replicas, rank=r, shuffle=shuffle,
                                            seed=4, drop_last=drop_last)
            s.set_epoch(epoch)
            lst = list(s)
            assert len(lst) == len(s)
            out.append(lst)
        return out
    assert indices(tdata, Range(n), False) == indices(pdata, PRange(n), False)
    t, p = indices(tdata, Range(n), True), indices(pdata, PRange(n), True)
    assert [len(x) for x in t] == [len(x) for x in p]
    # Padding repeats the start of the (shuffled) list: the multiplicities agree.
    assert sorted(Counter(Counter(sum(t, [])).values()).items()) == \
        sorted(Counter(Counter(sum(p, [])).values()).items())
    if not drop_last and n:
        assert set(sum(t, [])) == set(range(n))
        for per_rank in (t, p):  # interleaved back: a permutation, then its own start repeated
            full = [per_rank[r][k] for k in range(len(per_rank[0])) for r in range(replicas)]
            assert sorted(full[:n]) == list(range(n))
            assert full[n:] == (full[:n] * replicas)[:len(full) - n]
    assert indices(tdata, Range(n), True) == t  # seed + epoch fix the order
    if n >= 5 and sum(len(x) for x in t) >= 5:
        assert indices(tdata, Range(n), True, epoch=1) != t


def test_distributed_sampler_errors_match_torch() -> None:
    both_raise(lambda: tdata.DistributedSampler(Range(4), num_replicas=2, rank=2),
               lambda: pdata.DistributedSampler(PRange(4), num_replicas=2, rank=2))
    both_raise(lambda: tdata.DistributedSampler(Range(4), num_replicas=2, rank=-1),
               lambda: pdata.DistributedSampler(PRange(4), num_replicas=2, rank=-1))
    with pytest.raises(RuntimeError, match="num_replicas"):
        tdata.DistributedSampler(Range(4))


def test_sampler_base() -> None:
    with pytest.raises(NotImplementedError):
        iter(tdata.Sampler())
    with pytest.warns(UserWarning, match="data_source"):
        tdata.Sampler(Range(2))


# ---------------------------------------------------------------- DataLoader
def _dicts_class(lib: Any) -> type:
    class Dicts(lib.Dataset):
        def __len__(self) -> int:
            return 7

        def __getitem__(self, i: int) -> dict:
            return {"x": np.full(2, i, np.float32), "i": i, "name": f"s{i}", "t": (i * 0.5, [i])}
    return Dicts


Dicts, PDicts = _dicts_class(tdata), _dicts_class(pdata)


def _pair(**kw: Any) -> tuple:
    xs, ys = np.arange(14.0, dtype=np.float32).reshape(7, 2), np.arange(7)
    return (tdata.TensorDataset(ts.asarray(xs), ts.asarray(ys)),
            pdata.TensorDataset(torch.as_tensor(xs), torch.as_tensor(ys)))


LOADER_KWARGS = [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                 dict(batch_size=None), dict(batch_size=10), dict(sampler=[6, 0, 3], batch_size=2),
                 dict(batch_sampler=[[1, 2], [0], [6, 5, 4]]), dict(batch_size=2, collate_fn=lambda b: b),
                 dict(batch_size=None, sampler=[3, 1])]


@pytest.mark.parametrize("kw", LOADER_KWARGS, ids=str)
@pytest.mark.parametrize("which", ["tensors", "dicts"])
def test_dataloader_outputs_match_torch(kw: dict, which: str) -> None:
    t, p = _pair() if which == "tensors" else (Dicts(), PDicts())
    tl, pl = tdata.DataLoader(t, **kw), pdata.DataLoader(p, **kw)
    same(list(tl), list(pl))
    same(list(tl), list(pl))  # a second epoch starts over
    assert len(tl) == len(pl)


@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=10, drop_last=True)], ids=str)
def test_dataloader_iterable_matches_torch(kw: dict) -> None:
    tl, pl = tdata.DataLoader(Stream(0, 7), **kw), pdata.DataLoader(PStream(0, 7), **kw)
    same(list(tl), list(pl))
    assert len(tl) == len(pl)
    same(list(tdata.DataLoader(NoLenStream(), **kw)), list(pdata.DataLoader(PNoLenStream(), **kw)))
    both_raise(lambda: len(tdata.DataLoader(NoLenStream(), **kw)),
               lambda: len(pdata.DataLoader(PNoLenStream(), **kw)), same_message=False)


BAD_ARGS = [dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
            dict(batch_sampler=[[0]], shuffle=True), dict(batch_sampler=[[0]], sampler=[0]),
            dict(batch_sampler=[[0]], drop_last=True), dict(batch_size=None, drop_last=True),
            dict(batch_size=0), dict(batch_size=-2), dict(num_workers=-1), dict(timeout=-1),
            dict(prefetch_factor=2), dict(num_workers=1, prefetch_factor=-1),
            dict(persistent_workers=True), dict(multiprocessing_context="fork"),
            dict(num_workers=1, multiprocessing_context="nope"), dict(drop_last=2)]


@pytest.mark.parametrize("kw", BAD_ARGS, ids=str)
def test_dataloader_argument_errors_match_torch(kw: dict) -> None:
    t, p = _pair()
    both_raise(lambda: tdata.DataLoader(t, **kw), lambda: pdata.DataLoader(p, **kw))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])], ids=str)
def test_dataloader_iterable_argument_errors_match_torch(kw: dict) -> None:
    t, p = Stream(0, 3), PStream(0, 3)
    got, want = both_raise(lambda: tdata.DataLoader(t, **kw), lambda: pdata.DataLoader(p, **kw),
                           same_message=False)
    assert str(got).split(", but got")[0] == str(want).split(", but got")[0]


def test_zero_prefetch_factor_fails_on_iteration_like_torch() -> None:
    import gc
    import sys
    tl = tdata.DataLoader(Range(5), batch_size=2, num_workers=1, prefetch_factor=0)
    pl = pdata.DataLoader(PRange(5), batch_size=2, num_workers=1, prefetch_factor=0)
    hook, sys.unraisablehook = sys.unraisablehook, lambda unraisable: None
    try:  # torch's half-built iterator complains in its __del__: keep that out of the log
        both_raise(lambda: iter(tl), lambda: iter(pl))
        gc.collect()
    finally:
        sys.unraisablehook = hook


def test_dataloader_frozen_attributes_match_torch() -> None:
    t, p = _pair()
    tl, pl = tdata.DataLoader(t), pdata.DataLoader(p)
    for attr in ["batch_size", "sampler", "dataset", "drop_last", "batch_sampler", "persistent_workers"]:
        both_raise(lambda: setattr(tl, attr, None), lambda: setattr(pl, attr, None))
    tl.num_workers = 0  # others may change, as in PyTorch


def test_shuffle_with_generator_is_reproducible() -> None:
    t, _ = _pair()

    def epoch(loader: Any) -> List[int]:
        return [int(v) for b in loader for v in b[1].tolist()]
    a = epoch(tdata.DataLoader(t, batch_size=2, shuffle=True, generator=ts.random.Generator(7)))
    b = epoch(tdata.DataLoader(t, batch_size=2, shuffle=True, generator=ts.random.Generator(7)))
    assert a == b and sorted(a) == list(range(7))
    loader = tdata.DataLoader(Range(40), batch_size=8, shuffle=True, generator=ts.random.Generator(7))
    e1, e2 = [v for b in loader for v in b.tolist()], [v for b in loader for v in b.tolist()]
    assert e1 != e2 and sorted(e1) == sorted(e2) == list(range(40))
    ts.manual_seed(9)
    g1 = epoch(tdata.DataLoader(t, batch_size=3, shuffle=True))
    ts.manual_seed(9)
    assert epoch(tdata.DataLoader(t, batch_size=3, shuffle=True)) == g1


def test_iterator_object_and_reset() -> None:
    t, p = _pair()
    tl, pl = tdata.DataLoader(t, batch_size=3), pdata.DataLoader(p, batch_size=3)
    ti, pi = iter(tl), iter(pl)
    assert len(ti) == len(pi) and iter(ti) is ti
    same(next(ti), next(pi))
    same(list(iter(tl)), list(iter(pl)))  # a new iterator starts from the beginning
    same(list(ti), list(pi))  # the old one goes on where it was


def test_get_worker_info_in_main_process() -> None:
    assert tdata.get_worker_info() is None


def test_pin_memory_is_accepted() -> None:
    t, p = _pair()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = list(tdata.DataLoader(t, batch_size=4, pin_memory=True))
    same(got, list(pdata.DataLoader(p, batch_size=4)))
    if not ts.cuda.is_available():
        assert any("pin_memory" in str(x.message) for x in w)


def test_tensor_dataset_fast_path_keeps_semantics() -> None:
    class Doubled(tdata.TensorDataset):  # an overridden __getitem__ must be used
        def __getitem__(self, i: int) -> tuple:
            return tuple(t[i] * 2 for t in self.tensors)
    class PDoubled(pdata.TensorDataset):
        def __getitem__(self, i: int) -> tuple:
            return tuple(t[i] * 2 for t in self.tensors)
    xs = np.arange(8).reshape(4, 2)
    same(list(tdata.DataLoader(Doubled(ts.asarray(xs)), batch_size=3)),
         list(pdata.DataLoader(PDoubled(torch.as_tensor(xs)), batch_size=3)))
    t, p = _pair()
    for kw in [dict(batch_size=3, collate_fn=tdata.default_collate), dict(batch_size=3, collate_fn=list),
               dict(batch_sampler=[[-1, 0], [2, 2, 2]])]:
        pkw = dict(kw)
        if "collate_fn" in kw and kw["collate_fn"] is tdata.default_collate:
            pkw["collate_fn"] = pdata.default_collate
        same(list(tdata.DataLoader(t, **kw)), list(pdata.DataLoader(p, **pkw)))
    both_raise(lambda: list(tdata.DataLoader(t, sampler=[7], batch_size=1)),
               lambda: list(pdata.DataLoader(p, sampler=[7], batch_size=1)), same_message=False)


def test_tensor_dataset_loader_is_vectorized() -> None:
    import time
    n = 20000
    ds = tdata.TensorDataset(ts.ones((n, 16)), ts.arange(n))
    start = time.perf_counter()
    batches = list(tdata.DataLoader(ds, batch_size=256, shuffle=True))
    elapsed = time.perf_counter() - start
    assert sum(b[0].shape[0] for b in batches) == n
    assert elapsed < 1.0, f"{elapsed:.2f}s for {n} rows: batches are not gathered in one op"


# ---------------------------------------------------------------- worker processes
def _double(x: int) -> int:
    return 2 * x


def test_workers_map_style_match_torch() -> None:
    t, p = _pair()
    for kw in [dict(batch_size=2), dict(batch_size=3, drop_last=True), dict(batch_size=None),
               dict(batch_sampler=[[4, 5], [0]]), dict(batch_size=2, prefetch_factor=1)]:
        same(list(tdata.DataLoader(t, num_workers=2, **kw)), list(pdata.DataLoader(p, num_workers=2, **kw)))
    same(list(tdata.DataLoader(Dicts(), num_workers=3, batch_size=2)),
         list(pdata.DataLoader(PDicts(), num_workers=3, batch_size=2)))


def test_workers_shuffle_covers_dataset() -> None:
    loader = tdata.DataLoader(Range(23), batch_size=4, shuffle=True, num_workers=2,
                              generator=ts.random.Generator(0))
    got = [v for b in loader for v in b.tolist()]
    assert sorted(got) == list(range(23))
    again = tdata.DataLoader(Range(23), batch_size=4, shuffle=True, num_workers=2,
                             generator=ts.random.Generator(0))
    assert [v for b in again for v in b.tolist()] == got


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("kw", [dict(batch_size=None), dict(batch_size=2), dict(batch_size=2, drop_last=True)], ids=str)
def test_workers_iterable_match_torch(split: bool, kw: dict) -> None:
    got = list(tdata.DataLoader(Stream(0, 7, split), num_workers=2, **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns when workers yield more than len()
        want = list(pdata.DataLoader(PStream(0, 7, split), num_workers=2, **kw))
    same(got, want)


class InfoDataset(tdata.Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int) -> tuple:
        info = tdata.get_worker_info()
        return (i, info.id, info.num_workers, info.seed, info.dataset is not None,
                int(os.environ.get("TS_TEST_INIT", "-1")), os.getpid())


def _init_fn(worker_id: int) -> None:
    os.environ["TS_TEST_INIT"] = str(100 + worker_id)


def test_worker_info_and_init_fn() -> None:
    loader = tdata.DataLoader(InfoDataset(), batch_size=None, num_workers=2, worker_init_fn=_init_fn)
    rows = [tuple(r) for r in loader]
    assert [r[0] for r in rows] == list(range(6))
    assert [r[1] for r in rows] == [0, 1, 0, 1, 0, 1]  # round-robin, as in PyTorch
    assert all(r[2] == 2 and r[4] for r in rows)
    seeds = {r[1]: r[3] for r in rows}
    assert seeds[1] == seeds[0] + 1
    assert {r[5] for r in rows} == {100, 101}
    assert os.getpid() not in {r[6] for r in rows}
    with pytest.raises(RuntimeError, match="Cannot assign"):
        tdata.WorkerInfo(id=0, num_workers=1, seed=0, dataset=None).id = 3


class RandomItems(tdata.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> tuple:
        import random
        return (random.random(), float(ts.random.rand(()).item()), float(np.random.rand()))


def test_workers_are_seeded_differently() -> None:
    rows = [tuple(r) for r in tdata.DataLoader(RandomItems(), batch_size=None, num_workers=2)]
    for k in range(3):
        assert rows[0][k] != rows[1][k]  # workers 0 and 1 draw different streams


def test_persistent_workers_keep_processes() -> None:
    loader = tdata.DataLoader(InfoDataset(), batch_size=None, num_workers=2, persistent_workers=True)
    e1, e2 = [tuple(r) for r in loader], [tuple(r) for r in loader]
    assert [r[0] for r in e1] == [r[0] for r in e2] == list(range(6))
    assert {r[6] for r in e1} == {r[6] for r in e2}  # same worker processes
    it = iter(loader)
    next(it)  # stop early: the next epoch must still start from the beginning
    assert [tuple(r)[0] for r in loader] == list(range(6))
    fresh = tdata.DataLoader(InfoDataset(), batch_size=None, num_workers=2)
    assert {tuple(r)[6] for r in fresh}.isdisjoint({tuple(r)[6] for r in fresh})
    stream = tdata.DataLoader(Stream(0, 4, split=True), batch_size=None, num_workers=2,
                              persistent_workers=True)
    assert [int(v) for v in stream] == [int(v) for v in stream] == [0, 2, 1, 3]


def _failing_class(lib: Any) -> type:
    class Failing(lib.Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> int:
            if i == 2:
                raise KeyError(f"bad item {i}")
            return i
    return Failing


Failing, PFailing = _failing_class(tdata), _failing_class(pdata)


def test_worker_exceptions_reraise_like_torch() -> None:
    got, want = both_raise(lambda: list(tdata.DataLoader(Failing(), num_workers=2)),
                           lambda: list(pdata.DataLoader(PFailing(), num_workers=2)), same_message=False)
    assert "worker process" in str(got) and "bad item 2" in str(got)
    it = iter(tdata.DataLoader(Failing(), num_workers=2))
    assert [int(next(it)[0]), int(next(it)[0])] == [0, 1]
    with pytest.raises(KeyError):
        next(it)
    assert int(next(it)[0]) == 3  # the iterator goes on after an error, as PyTorch's does

    def bad_init(worker_id: int) -> None:
        raise ValueError("init failed")
    with pytest.raises(ValueError, match="init failed"):
        list(tdata.DataLoader(Range(4), num_workers=1, worker_init_fn=bad_init))


class Slow(tdata.Dataset):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        import time
        time.sleep(1.5)
        return i


class Dies(tdata.Dataset):
    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        os._exit(3)


def test_worker_timeout_and_death() -> None:
    with pytest.raises(RuntimeError, match="timed out after 0.3 seconds"):
        list(tdata.DataLoader(Slow(), num_workers=1, timeout=0.3))
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(tdata.DataLoader(Dies(), num_workers=1))


def test_workers_with_spawn_free_default_context_and_collate_fn() -> None:
    got = list(tdata.DataLoader(Range(5), batch_size=2, num_workers=2, collate_fn=lambda b: [_double(x) for x in b],
                                multiprocessing_context="fork"))
    assert got == [[0, 2], [4, 6], [8]]


class Prestacked(tdata.Dataset):
    """A dataset whose ``__getitems__`` stacks a batch itself (the protocol ts.datasets use)."""

    def __len__(self) -> int:
        return 5

    def __getitem__(self, i: int) -> tuple:
        return ts.asarray(i), ts.asarray(2 * i)

    def __getitems__(self, idx: List[int]) -> Any:
        from tessera.utils.data.dataset import _BatchTuple
        return _BatchTuple((ts.asarray(idx), ts.asarray([2 * i for i in idx])))


def test_prestacked_batches_behave_like_samples() -> None:
    def want(idx: List[int]) -> Any:
        return [Prestacked()[i] for i in idx]
    same(list(tdata.DataLoader(Prestacked(), batch_size=2)),
         [tdata.default_collate(want(b)) for b in ([0, 1], [2, 3], [4])])
    same(list(tdata.DataLoader(Prestacked(), batch_size=2, collate_fn=lambda b: b)),
         [want(b) for b in ([0, 1], [2, 3], [4])])
    stacked = tdata.StackDataset(Prestacked(), Range(5, 10))
    same(stacked.__getitems__([0, 3]), [(Prestacked()[0], 10), (Prestacked()[3], 13)])
    same(list(tdata.DataLoader(tdata.Subset(Prestacked(), [4, 1]), batch_size=2)),
         [tdata.default_collate(want([4, 1]))])


def test_plain_sequences_and_private_import_paths() -> None:
    same(list(tdata.DataLoader([1, 2, 3], batch_size=2)), list(pdata.DataLoader([1, 2, 3], batch_size=2)))
    same(list(tdata.DataLoader(range(4), batch_size=None)), list(pdata.DataLoader(range(4), batch_size=None)))
    from tessera.utils.data._utils.collate import default_collate
    from tessera.utils.data.dataloader import default_convert
    assert default_collate is tdata.default_collate and default_convert is tdata.default_convert


def test_nested_subsets_and_getitems_overrides() -> None:
    xs = np.arange(20).reshape(10, 2)
    t = tdata.Subset(tdata.Subset(tdata.TensorDataset(ts.asarray(xs)), [9, 8, 7, 6, 5]), [4, 0, 2])
    p = pdata.Subset(pdata.Subset(pdata.TensorDataset(torch.as_tensor(xs)), [9, 8, 7, 6, 5]), [4, 0, 2])
    same(list(tdata.DataLoader(t, batch_size=2)), list(pdata.DataLoader(p, batch_size=2)))

    def with_getitems(lib: Any) -> type:
        class Rows(lib.TensorDataset):  # DataLoader must call the user's __getitems__
            def __getitems__(self, idx: List[int]) -> list:
                return [(self.tensors[0][i] + 100,) for i in idx]
        return Rows
    ta, pa = with_getitems(tdata)(ts.asarray(xs)), with_getitems(pdata)(torch.as_tensor(xs))
    same(list(tdata.DataLoader(ta, batch_size=4)), list(pdata.DataLoader(pa, batch_size=4)))
    same(list(tdata.DataLoader(tdata.Subset(ta, [1, 2]), batch_size=4)),
         list(pdata.DataLoader(pdata.Subset(pa, [1, 2]), batch_size=4)))


@settings(deadline=None, max_examples=40)
@given(n=st.integers(0, 30), batch_size=st.one_of(st.none(), st.integers(1, 9)), drop_last=st.booleans(),
       cols=st.integers(0, 3), dtype=st.sampled_from(["float32", "float64", "int32", "int64", "bool", "uint8"]))
def test_sequential_loading_matches_torch_property(n: int, batch_size: Any, drop_last: bool, cols: int,
                                                   dtype: str) -> None:
    if batch_size is None:
        drop_last = False
    xs = (np.arange(n * cols).reshape(n, cols) % 3).astype(dtype)
    ys = np.arange(n)
    t = tdata.TensorDataset(ts.asarray(xs), ts.asarray(ys))
    p = pdata.TensorDataset(torch.as_tensor(xs), torch.as_tensor(ys))
    tl = tdata.DataLoader(t, batch_size=batch_size, drop_last=drop_last)
    pl = pdata.DataLoader(p, batch_size=batch_size, drop_last=drop_last)
    same(list(tl), list(pl))
    assert len(tl) == len(pl)


@settings(deadline=None, max_examples=60)
@given(n=st.integers(0, 40), replicas=st.integers(1, 9), drop_last=st.booleans(), data=st.data())
def test_distributed_sampler_property(n: int, replicas: int, drop_last: bool, data: Any) -> None:
    rank = data.draw(st.integers(0, replicas - 1))
    kw = dict(num_replicas=replicas, rank=rank, drop_last=drop_last)
    t = tdata.DistributedSampler(Range(n), shuffle=False, **kw)
    p = pdata.DistributedSampler(PRange(n), shuffle=False, **kw)
    assert list(t) == list(p) and len(t) == len(p) and t.total_size == p.total_size
    ts_shuf = list(tdata.DistributedSampler(Range(n), **kw))
    assert len(ts_shuf) == len(p) and all(0 <= i < n for i in ts_shuf)


def test_warnings_match_torch() -> None:
    def record(fn: Callable[[], Any]) -> List[str]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn()
        return [type(x.message).__name__ + ":" + str(x.message).split(" was reported")[0].split(" (")[0]
                for x in w]

    def overrun(lib: Any, stream: Any) -> None:
        loader = lib.DataLoader(stream, batch_size=None, num_workers=2)
        len(loader)
        list(loader)
    got = record(lambda: overrun(tdata, Stream(0, 3)))
    want = record(lambda: overrun(pdata, PStream(0, 3)))
    assert len(got) == len(want) >= 3
    assert all(g.startswith("UserWarning:Length of IterableDataset") for g in got[-3:])
    cpus = len(os.sched_getaffinity(0))
    got = record(lambda: tdata.DataLoader(Range(3), num_workers=cpus + 1))
    want = record(lambda: pdata.DataLoader(PRange(3), num_workers=cpus + 1))
    assert got == want and len(got) == 1
