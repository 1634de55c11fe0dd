"""ts.utils.data (Dataset, TensorDataset, samplers, DataLoader, random_split) and
ts.datasets (MNIST from tiny IDX files, TinyShakespeare)."""
from __future__ import annotations

import gzip
import struct
from collections import namedtuple

import numpy as np
import pytest

import tessera as ts
from tessera import datasets
from tessera.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, Generator,
                                IterableDataset, RandomSampler, SequentialSampler, Subset,
                                TensorDataset, default_collate, random_split)


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return {"x": ts.full((2,), float(i)), "i": i, "name": f"s{i}"}


def test_tensor_dataset_and_loader_order() -> None:
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    ds = TensorDataset(ts.asarray(x), y)
    assert len(ds) == 10
    a, b = ds[3]
    assert a.tolist() == [6.0, 7.0] and int(b.item()) == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert [tuple(bx.shape) for bx, _ in batches] == [(4, 2), (4, 2), (2, 2)]
    np.testing.assert_array_equal(np.concatenate([by.numpy() for _, by in batches]), y)
    assert batches[0][1].dtype == ts.int64
    assert len(DataLoader(ds, batch_size=4)) == 3
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [tuple(bx.shape) for bx, _ in DataLoader(ds, batch_size=4, drop_last=True)] == [(4, 2)] * 2
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(ts.ones((3, 2)), ts.ones(4))


def test_shuffle_is_a_seeded_permutation_per_epoch() -> None:
    ds = TensorDataset(ts.arange(50))

    def epoch(loader):
        return np.concatenate([b[0].numpy() for b in loader]).tolist()
    loader = DataLoader(ds, batch_size=8, shuffle=True, generator=Generator(3))
    e1, e2 = epoch(loader), epoch(loader)
    assert sorted(e1) == list(range(50)) and sorted(e2) == list(range(50))
    assert e1 != e2 and e1 != list(range(50))
    again = DataLoader(ds, batch_size=8, shuffle=True, generator=Generator(3))
    assert epoch(again) == e1  # same seed, same order
    ts.manual_seed(11)
    f1 = epoch(DataLoader(ds, batch_size=8, shuffle=True))
    ts.manual_seed(11)
    assert epoch(DataLoader(ds, batch_size=8, shuffle=True)) == f1


def test_default_collate_structures() -> None:
    out = default_collate([Squares(3)[i] for i in range(3)])
    assert out["x"].shape == (3, 2) and out["i"].dtype == ts.int64 and out["i"].tolist() == [0, 1, 2]
    assert out["name"] == ["s0", "s1", "s2"]
    P = namedtuple("P", "a b")
    p = default_collate([P(1.5, np.ones(2)), P(2.5, np.zeros(2))])
    assert isinstance(p, P) and p.a.dtype == ts.float64 and p.b.shape == (2, 2)
    assert default_collate([[1, 2], [3, 4]])[1].tolist() == [2, 4]
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object()])
    loader = DataLoader(Squares(5), batch_size=2, collate_fn=lambda b: [d["i"] for d in b])
    assert list(loader) == [[0, 1], [2, 3], [4]]
    assert [d["i"] for d in DataLoader(Squares(3), batch_size=None)] == [0, 1, 2]


def test_samplers_and_custom_sampler() -> None:
    ds = Squares(10)
    assert list(SequentialSampler(ds)) == list(range(10))
    r = list(RandomSampler(ds, generator=Generator(0)))
    assert sorted(r) == list(range(10))
    rr = list(RandomSampler(ds, replacement=True, num_samples=30, generator=Generator(0)))
    assert len(rr) == 30 and all(0 <= i < 10 for i in rr)
    assert list(BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(BatchSampler(range(7), 3, True)) == 2
    loader = DataLoader(ds, batch_size=3, sampler=[9, 8, 7, 1])
    assert [b["i"].tolist() for b in loader] == [[9, 8, 7], [1]]
    loader = DataLoader(ds, batch_sampler=[[0, 5], [2]])
    assert [b["i"].tolist() for b in loader] == [[0, 5], [2]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=[1], shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)


def test_subset_concat_random_split() -> None:
    ds = TensorDataset(ts.arange(10))
    sub = Subset(ds, [7, 2, 5])
    assert len(sub) == 3 and int(sub[0][0].item()) == 7
    assert [b[0].tolist() for b in DataLoader(sub, batch_size=2)] == [[7, 2], [5]]
    cat = ConcatDataset([Squares(3), Squares(2)])
    assert len(cat) == 5 and cat[4]["i"] == 1 and cat[-1]["i"] == 1
    with pytest.raises(IndexError):
        cat[5]
    a, b = random_split(ds, [7, 3], generator=Generator(1))
    ia = [int(a[i][0].item()) for i in range(len(a))]
    ib = [int(b[i][0].item()) for i in range(len(b))]
    assert sorted(ia + ib) == list(range(10)) and len(ia) == 7
    parts = random_split(ds, [0.5, 0.3, 0.2], generator=Generator(1))
    assert [len(p) for p in parts] == [5, 3, 2]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])


def test_iterable_dataset() -> None:
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(list(DataLoader(Stream(), batch_size=3, drop_last=True))) == 2
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(), shuffle=True)


def _write_idx(path, arr: np.ndarray, code: int, gz: bool) -> None:
    head = struct.pack(">BBBB", 0, 0, code, arr.ndim) + b"".join(struct.pack(">I", d) for d in arr.shape)
    data = head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    if gz:
        with gzip.open(str(path) + ".gz", "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_from_tiny_idx_files(tmp_path, gz: bool) -> None:
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (12, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 12).astype(np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte", imgs, 0x08, gz)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", labels, 0x08, gz)
    ds = datasets.MNIST(str(tmp_path), train=True)
    assert len(ds) == 12
    x, y = ds[4]
    assert x.shape == (1, 28, 28) and x.dtype == ts.float32 and y == labels[4]
    np.testing.assert_allclose(x.numpy()[0], imgs[4] / 255.0, rtol=1e-6)
    xb, yb = next(iter(DataLoader(ds, batch_size=5)))
    assert xb.shape == (5, 1, 28, 28) and yb.tolist() == labels[:5].tolist()
    np.testing.assert_allclose(xb.numpy()[:, 0], imgs[:5] / 255.0, rtol=1e-6)
    flip = datasets.FashionMNIST(str(tmp_path), transform=lambda t: 1 - t, target_transform=str)
    fx, fy = next(iter(DataLoader(flip, batch_size=3, collate_fn=lambda b: b)))[0]
    np.testing.assert_allclose(fx.numpy()[0], 1 - imgs[0] / 255.0, rtol=1e-6)
    assert fy == str(labels[0])
    with pytest.raises(FileNotFoundError, match="t10k-images"):
        datasets.MNIST(str(tmp_path), train=False)
    (tmp_path / "junk").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(ValueError, match="bad magic"):
        datasets.read_idx(str(tmp_path / "junk"))


def test_idx_wider_types(tmp_path) -> None:
    arr = np.arange(6, dtype=np.int32).reshape(2, 3) - 2
    _write_idx(tmp_path / "a", arr, 0x0C, False)
    np.testing.assert_array_equal(datasets.read_idx(str(tmp_path / "a")), arr)


def test_tiny_shakespeare(tmp_path) -> None:
    text = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 3
    (tmp_path / "input.txt").write_text(text)
    ds = datasets.TinyShakespeare(str(tmp_path), block_size=8)
    x, y = ds[5]
    assert x.dtype == ts.int64 and x.shape == (8,)
    assert ds.decode(x) == text[5:13] and ds.decode(y) == text[6:14]
    assert len(ds) == int(len(text) * 0.9) - 8
    val = datasets.TinyShakespeare(str(tmp_path), block_size=8, train=False)
    assert ds.decode(val[0][0]) == text[int(len(text) * 0.9):][:8]
    assert ds.vocab_size == len(set(text)) and ds.decode(ds.encode("hear")) == "hear"
    xb, yb = next(iter(DataLoader(ds, batch_size=4, shuffle=True)))
    assert xb.shape == (4, 8) and yb.shape == (4, 8)
    bx, by = next(iter(DataLoader(ds, batch_size=3, sampler=[5, 0, len(ds) - 1])))
    for row, i in enumerate([5, 0, len(ds) - 1]):
        assert bx[row].tolist() == ds[i][0].tolist() and by[row].tolist() == ds[i][1].tolist()
    with pytest.raises(IndexError, match="out of range"):
        ds.__getitems__([len(ds)])
