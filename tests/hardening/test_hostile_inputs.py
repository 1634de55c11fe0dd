"""Hostile inputs (issue 22, the sweep of session 17): checkpoint archives whose records
overlap (a zip bomb), legacy checkpoints whose storages together claim more than the file,
integer arguments at the ends of int64, non-finite histogram ranges, lying output sizes, and
allocations too large to make. Each finding has a test here; the probes that could crash,
hang or exhaust memory run in a subprocess (with a memory limit and a timeout), so a
regression fails a test instead of killing the run.
"""
from __future__ import annotations

import io
import pickle
import struct
import zipfile
from typing import Any

import pytest
import torch

import tessera as ts
from harness import run_probes


# ---- checkpoints: no amplification of a small file ---------------------------------------

def _u(s: str) -> bytes:
    return pickle.BINUNICODE + struct.pack("<I", len(s)) + s.encode()


def _i(v: int) -> bytes:
    return (pickle.LONG1 + bytes([len(pickle.encode_long(v))]) + pickle.encode_long(v)) if v \
        else pickle.BININT1 + b"\x00"


def _tuple(vals: Any) -> bytes:
    return pickle.MARK + b"".join(_i(v) for v in vals) + pickle.TUPLE


def _tensor(persid: bytes, numel: int) -> bytes:
    """A pickled torch._utils._rebuild_tensor_v2 of a 1-D float32 view of `numel` elements."""
    return (pickle.GLOBAL + b"torch._utils\n_rebuild_tensor_v2\n" + pickle.MARK + persid
            + _i(0) + _tuple((numel,)) + _tuple((1,)) + pickle.NEWFALSE + pickle.EMPTY_DICT
            + pickle.TUPLE + pickle.REDUCE)


def _zip_storage_id(key: str, numel: int) -> bytes:
    return (pickle.MARK + _u("storage") + pickle.GLOBAL + b"torch\nFloatStorage\n" + _u(key)
            + _u("cpu") + _i(numel) + pickle.TUPLE + pickle.BINPERSID)


def _overlapping_archive(n: int, nbytes: int) -> bytes:
    """A checkpoint zip whose central directory lists n storage records data/0..data/n-1 that
    all point at the same stored bytes: each would load as its own copy (a zip bomb)."""
    pkl = (pickle.PROTO + b"\x02" + pickle.MARK
           + b"".join(_tensor(_zip_storage_id(str(k), nbytes // 4), nbytes // 4)
                      for k in range(n)) + pickle.LIST + pickle.STOP)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a/data.pkl", pkl)
        zf.writestr("a/data/0", b"\0" * nbytes)
    raw = buf.getvalue()
    eocd = raw.rfind(b"PK\x05\x06")
    cd_start = struct.unpack("<I", raw[eocd + 16:eocd + 20])[0]
    cd = raw[cd_start:eocd]
    second = cd.find(b"PK\x01\x02", 4)
    entries = cd[:second]  # the entry of data.pkl, then n copies of the entry of data/0
    for k in range(n):
        name = f"a/data/{k}".encode()
        e = bytearray(cd[second:second + 46])
        struct.pack_into("<H", e, 28, len(name))
        entries += bytes(e) + name
    end = bytearray(raw[eocd:eocd + 22])
    struct.pack_into("<HHII", end, 8, n + 1, n + 1, len(entries), cd_start)
    return raw[:cd_start] + entries + bytes(end)


def test_overlapping_zip_records_are_refused() -> None:
    # Before: a file of 64 KiB loaded as 40 tensors of 64 KiB each (an 8 MiB file as 1.9 GB).
    data = _overlapping_archive(40, 64 << 10)
    assert len(zipfile.ZipFile(io.BytesIO(data)).infolist()) == 41  # a zip Python can list
    with pytest.raises(ValueError, match="overlap") as info:
        ts.load(io.BytesIO(data))
    assert "load:" in str(info.value) and "data/1" in str(info.value)
    with pytest.raises(ValueError, match="overlap"):
        ts.load(io.BytesIO(data), mmap=False, weights_only=False)
    # one storage viewed by several tensors is not an overlap
    x = ts.arange(8.0)
    buf = io.BytesIO()
    ts.save({"a": x, "b": x[2:], "c": x[::2]}, buf)
    buf.seek(0)
    out = ts.load(buf)
    assert out["c"].tolist() == [0.0, 2.0, 4.0, 6.0]


def test_legacy_storages_together_must_fit_in_the_file() -> None:
    # Before: each storage was checked against the file size alone, so n storages could
    # allocate n times the file.
    buf = io.BytesIO()
    torch.save({"x": torch.ones(3)}, buf, _use_new_zipfile_serialization=False)
    f = io.BytesIO(buf.getvalue())
    for _ in range(3):  # magic number, protocol version, sys info
        pickle.load(f)
    head = buf.getvalue()[:f.tell()]
    n, numel = 20, 2000

    def persid(k: int) -> bytes:
        return (pickle.MARK + _u("storage") + pickle.GLOBAL + b"torch\nFloatStorage\n"
                + _u(str(k)) + _u("cpu") + _i(numel) + pickle.NONE + pickle.TUPLE
                + pickle.BINPERSID)

    obj = (pickle.PROTO + b"\x02" + pickle.MARK
           + b"".join(_tensor(persid(k), numel) for k in range(n)) + pickle.LIST + pickle.STOP)
    data = head + obj + pickle.dumps([str(k) for k in range(n)], 2)
    data += b"\0" * (numel * 4 + 64 - len(data))  # each storage alone fits in the file
    with pytest.raises(ValueError, match="more than the file") as info:
        ts.load(io.BytesIO(data))
    assert "storage 1 declares 2000 elements" in str(info.value)


# ---- integer and float edges of ops ---------------------------------------------------------

def test_histc_of_a_non_finite_range_raises_like_torch() -> None:
    # Before: NaN data or an infinite range gave a histogram of zeros (silent garbage).
    for x, kw in [([float("nan"), 1.0], {}), ([1.0, 2.0], {"min": 0, "max": float("inf")}),
                  ([1.0, float("inf")], {}), ([1.0], {"min": float("-inf"), "max": 0})]:
        with pytest.raises(RuntimeError, match="not finite"):
            torch.histc(torch.tensor(x), bins=4, **kw)
        with pytest.raises(RuntimeError, match=r"histc: range of \[.*\] is not finite"):
            ts.histc(ts.tensor(x), bins=4, **kw)
    assert ts.histc(ts.tensor([1.0, 2.0, 3.0]), bins=3).tolist() == [1.0, 1.0, 1.0]
    assert ts.histc(ts.tensor([]), bins=2).tolist() == [0.0, 0.0]


def test_repeat_interleave_output_size_must_match_like_torch() -> None:
    # Before: a wrong output_size was ignored.
    with pytest.raises(RuntimeError):
        torch.repeat_interleave(torch.ones(3), torch.tensor([1, 1, 1]), output_size=1)
    with pytest.raises(RuntimeError, match="output_size=1 does not match .* length 3"):
        ts.repeat_interleave(ts.ones(3), ts.tensor([1, 1, 1]), output_size=1)
    with pytest.raises(RuntimeError, match="output_size=2"):
        ts.repeat_interleave(ts.tensor([1, 2]), output_size=2)
    with pytest.raises(RuntimeError, match="output_size=5"):
        ts.ones(2, 3).repeat_interleave(2, dim=1, output_size=5)
    assert ts.repeat_interleave(ts.ones(3), ts.tensor([1, 2, 1]), output_size=4).shape == (4,)
    assert ts.repeat_interleave(ts.tensor([1, 2]), output_size=3).tolist() == [0, 1, 1]
    assert ts.ones(2, 3).repeat_interleave(2, dim=1, output_size=6).shape == (2, 6)


def test_frombuffer_count_zero_names_the_count() -> None:
    with pytest.raises(ValueError, match=r"frombuffer: .*count \(0\) must not be 0"):
        ts.frombuffer(bytearray(16), dtype=ts.float32, count=0)


def test_narrow_length_overflowing_int64_raises_like_torch() -> None:
    # Before: start + length wrapped around int64 and narrow returned an empty tensor.
    res = run_probes("""
        probe("huge length", lambda: ts.ones(4).narrow(0, 1, 2**63 - 1))
        probe("huge length, negative start", lambda: ts.ones(4).narrow(0, -1, 2**63 - 1))
        probe("narrow_copy", lambda: ts.narrow_copy(ts.ones(4), 0, 2, 2**63 - 2))
        probe("fits", lambda: ts.ones(4).narrow(0, -2, 2).tolist())
        """)
    for name in ("huge length", "huge length, negative start", "narrow_copy"):
        cls, msg = res[name]
        assert cls == "RuntimeError" and "exceeds dimension size (4)" in msg, (name, res[name])
    assert res["fits"] == ["ok", "[1.0, 1.0]"]
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        torch.ones(4).narrow(0, 1, 2**63 - 1)


def test_allocations_too_large_raise_memory_error_naming_the_size() -> None:
    # Before: "out of memory while allocating a tensor" (no size) for the allocator's failure,
    # and tensor(range(huge)) a TypeError with an empty reason.
    res = run_probes("""
        probe("full", lambda: ts.full((2**40,), 1.0))
        probe("empty float64", lambda: ts.empty(2**37, dtype=ts.float64))
        probe("histc bins", lambda: ts.histc(ts.ones(3), bins=2**40))
        probe("range", lambda: ts.tensor(range(2**40)))
        """)
    for name, nbytes in (("full", 2**42), ("empty float64", 2**40), ("histc bins", None)):
        cls, msg = res[name]
        assert cls == "MemoryError" and "GiB" in msg, (name, res[name])
        assert nbytes is None or f"a tensor of {nbytes} bytes" in msg, (name, msg)
    cls, msg = res["range"]
    assert cls == "MemoryError" and msg.startswith("tensor: out of memory") and "range" in msg


# ---- a sweep of extreme arguments: every one raises (or returns), none crashes or hangs ----

SWEEP = """
    M = 2**63 - 1
    N = -2**63
    cases = {
        "empty": lambda: ts.empty(2**62), "zeros 2^63": lambda: ts.zeros(2**63),
        "ones max": lambda: ts.ones(M), "randn": lambda: ts.randn(2**31, 2**31),
        "arange inf": lambda: ts.arange(0, float("inf")),
        "arange tiny step": lambda: ts.arange(0, 1, 1e-300),
        "arange int64 span": lambda: ts.arange(N, M),
        "linspace": lambda: ts.linspace(0, 1, 2**62),
        "randint": lambda: ts.randint(5, 5, (3,)),
        "multinomial": lambda: ts.multinomial(ts.ones(3), 5),
        "bincount": lambda: ts.bincount(ts.tensor([1]), minlength=2**62),
        "bincount value": lambda: ts.bincount(ts.tensor([2**62])),
        "histc nan": lambda: ts.histc(ts.tensor([float("nan")]), bins=4),
        "one_hot": lambda: F.one_hot(ts.tensor([1]), num_classes=2**62),
        "interpolate": lambda: F.interpolate(ts.ones(1, 1, 4), scale_factor=1e18),
        "interpolate nan": lambda: F.interpolate(ts.ones(1, 1, 4), scale_factor=float("nan")),
        "conv padding": lambda: F.conv1d(ts.ones(1, 1, 4), ts.ones(1, 1, 3), padding=2**62),
        "conv dilation": lambda: F.conv1d(ts.ones(1, 1, 4), ts.ones(1, 1, 3), dilation=2**62),
        "conv_transpose": lambda: F.conv_transpose1d(ts.ones(1, 1, 4), ts.ones(1, 1, 3),
                                                     output_padding=2**62, stride=2**62 + 1),
        "conv groups": lambda: F.conv1d(ts.ones(1, 1, 4), ts.ones(1, 1, 3), groups=2**62),
        "pad": lambda: F.pad(ts.ones(3), (M, M)),
        "pad negative": lambda: F.pad(ts.ones(3), (N + 1, 0)),
        "pad reflect": lambda: F.pad(ts.ones(1, 1, 3), (N + 1, M), mode="reflect"),
        "kthvalue": lambda: ts.kthvalue(ts.ones(3), N), "topk": lambda: ts.topk(ts.ones(3), M),
        "sum dim": lambda: ts.ones(3).sum(N), "softmax dim": lambda: ts.ones(3).softmax(N),
        "roll": lambda: ts.roll(ts.arange(3), N).tolist(),
        "repeat": lambda: ts.ones(3).repeat(2**62),
        "repeat_interleave": lambda: ts.repeat_interleave(ts.ones(3), ts.tensor([2**62] * 3)),
        "tile": lambda: ts.tile(ts.ones(3), (2**62,)), "expand": lambda: ts.ones(1).expand(N),
        "view": lambda: ts.ones(4).view(2**32, 2**32, -1),
        "unfold": lambda: ts.ones(4).unfold(0, 2, M),
        "unfold size": lambda: ts.ones(4).unfold(0, M, 1),
        "F.unfold": lambda: F.unfold(ts.ones(1, 1, 4, 4), kernel_size=2**31, dilation=2**31),
        "fold": lambda: F.fold(ts.ones(1, 4, 4), output_size=(2**40, 2**40), kernel_size=2),
        "narrow start": lambda: ts.ones(4).narrow(0, N, 1),
        "select": lambda: ts.ones(4).select(0, N), "index": lambda: ts.ones(4)[N],
        "slice": lambda: ts.ones(4)[N:M:M].tolist(), "split": lambda: ts.split(ts.ones(4), M),
        "chunk": lambda: ts.chunk(ts.ones(4), M),
        "tensor_split": lambda: ts.tensor_split(ts.ones(4), 2**40),
        "diagonal": lambda: ts.ones(2, 2).diagonal(N).tolist(),
        "diag": lambda: ts.diag(ts.ones(2), N),
        "eye": lambda: ts.eye(2**40, 2**40), "tril_indices": lambda: ts.tril_indices(3, 3, N).shape,
        "triu_indices": lambda: ts.triu_indices(2**40, 2**40),
        "combinations": lambda: ts.combinations(ts.ones(100), 50),
        "gather": lambda: ts.gather(ts.ones(3), 0, ts.tensor([N])),
        "embedding": lambda: F.embedding(ts.tensor([N]), ts.ones(3, 2)),
        "index_add": lambda: ts.zeros(3).index_add(0, ts.tensor([N]), ts.ones(1)),
        "matmul": lambda: ts.ones(1, 1).expand(2**32, 1) @ ts.ones(1, 1).expand(1, 2**32),
        "stft": lambda: ts.stft(ts.ones(16), n_fft=2**40, return_complex=True),
        "fft": lambda: ts.fft.fft(ts.ones(4), n=2**62), "hann": lambda: ts.hann_window(2**62),
        "randperm": lambda: ts.randperm(2**62),
        "frombuffer": lambda: ts.frombuffer(bytearray(16), dtype=ts.float32, count=2**62),
        "as_strided": lambda: ts.as_strided(ts.ones(4), (2,), (2**62,), 2**62),
        "as_strided offset": lambda: ts.as_strided(ts.ones(4), (1,), (1,), M),
        "set_": lambda: ts.empty(0).set_(ts.ones(4), 0, (2,), (2**62,)),
        "resize_": lambda: ts.ones(4).resize_(2**32, 2**32),
        "empty_strided": lambda: ts.empty_strided((2**31, 2**31), (2**31, 1)),
        "poisson": lambda: ts.poisson(ts.tensor([1e300])),
        "random_": lambda: ts.empty(3).random_(5, 2),
    }
    for name, fn in cases.items():
        probe(name, fn)
"""


def test_extreme_integer_arguments_raise_and_never_crash() -> None:
    res = run_probes(SWEEP, timeout=90)
    allowed = {"ValueError", "IndexError", "RuntimeError", "MemoryError", "TypeError",
               "NotImplementedError", "IntRangeError"}
    returned = {"roll", "slice", "split", "diagonal", "tril_indices"}  # as torch: valid
    for name, (cls, msg) in res.items():
        if name in returned:
            assert cls == "ok", (name, cls, msg)
            continue
        assert cls in allowed, (name, cls, msg)
        assert msg and "std::" not in msg and "pybind11" not in msg, (name, msg)


def test_grid_sample_with_nan_or_infinite_grid_values() -> None:
    # Before: a NaN grid value cast to the index INT64_MIN and grid_sample raised
    # "IndexError: gather: index -9223372036854775808 is out of bounds".
    F = ts.nn.functional
    x = ts.ones(1, 1, 4, 4)
    nan = ts.full((1, 2, 2, 2), float("nan"))
    for mode, want in (("bilinear", "nan"), ("bicubic", "nan"), ("nearest", 0.0)):
        out = F.grid_sample(x, nan, mode=mode, align_corners=False)
        tout = torch.nn.functional.grid_sample(torch.ones(1, 1, 4, 4), torch.full(
            (1, 2, 2, 2), float("nan")), mode=mode, align_corners=False)
        assert torch.equal(tout.isnan(), torch.from_numpy(out.isnan().numpy())), mode
        assert out.isnan().all().item() if want == "nan" else out.tolist() == [[[[0.0] * 2] * 2]]
    for padding in ("zeros", "border", "reflection"):
        for bad in (float("nan"), float("inf"), -float("inf")):
            g = ts.tensor([[[[0.1, 0.2], [bad, 0.3]]]])
            out = F.grid_sample(x, g, padding_mode=padding, align_corners=False)
            assert out.shape == (1, 1, 1, 2) and out[0, 0, 0, 0].item() == 1.0  # the finite one
    out = F.grid_sample(ts.ones(1, 1, 2, 4, 4), ts.full((1, 2, 2, 2, 3), float("nan")),
                        align_corners=False)
    assert out.shape == (1, 1, 2, 2, 2)


def test_packed_sequences_with_lying_batch_sizes_raise() -> None:
    # Before: GRU ran on batch_sizes [1, 2] (increasing) and returned garbage where torch
    # raises; pad_packed_sequence raised NumPy's "could not broadcast" for sizes summing past
    # the data, and IndexError for unsorted_indices outside the batch.
    rnn = ts.nn.utils.rnn
    P = rnn.PackedSequence
    for sizes, rows in (([1, 2], 3), ([2, 2, 9], 5), ([2, 0, 2], 4), ([3, -1], 2), ([], 4)):
        seq = P(ts.ones(rows, 4), ts.tensor(sizes, dtype=ts.int64))
        for call in (lambda: ts.nn.GRU(4, 4)(seq), lambda: ts.nn.LSTM(4, 4)(seq),
                     lambda: rnn.pad_packed_sequence(seq)):
            with pytest.raises(RuntimeError, match="invalid PackedSequence: batch_sizes"):
                call()
    bad = P(ts.ones(3, 2), ts.tensor([2, 1]), ts.tensor([1, 0]), ts.tensor([0, 99]))
    with pytest.raises(ValueError, match="unsorted_indices .* permutation"):
        rnn.pad_packed_sequence(bad)
    good = rnn.pack_sequence([ts.ones(3, 2), ts.ones(1, 2)])
    assert rnn.pad_packed_sequence(good)[1].tolist() == [3, 1]
    assert ts.nn.LSTM(2, 4)(good)[1][0].shape == (1, 2, 4)


def test_array_interface_with_a_pointer_in_the_first_page_raises() -> None:
    # Before: data=(16, False) in __array_interface__ crashed the interpreter (SIGSEGV).
    res = run_probes("""
        import numpy as np
        def obj(ptr, shape=(4,)):
            d = {"shape": shape, "typestr": "<f4", "data": (ptr, False), "version": 3}
            return type("A", (), {"__array_interface__": d})()
        probe("asarray", lambda: ts.asarray(obj(16)))
        probe("tensor", lambda: ts.tensor(obj(4095)))
        probe("empty", lambda: ts.asarray(obj(0, (0,))).shape)
        a = np.arange(3.0)
        probe("real", lambda: ts.asarray(obj(a.__array_interface__["data"][0], (2,))).shape)
        """)
    for name in ("asarray", "tensor"):
        cls, msg = res[name]
        assert cls == "ValueError" and "is not valid memory" in msg and name in msg, res[name]
    assert res["empty"] == ["ok", "(0,)"] and res["real"] == ["ok", "(2,)"]


def test_from_dlpack_with_a_malformed_dlpack_device_names_the_op() -> None:
    # Before: "invalid literal for int() with base 10: 'x'" (a builtin ValueError, no op).
    import numpy as np
    for dev in ("x", (1,), 5, (1, "a")):
        o = type("D", (), {"__dlpack__": lambda s, **k: np.arange(3.0).__dlpack__(),
                           "__dlpack_device__": lambda s, d=dev: d})()
        with pytest.raises(ts.errors.ValueError, match=r"from_dlpack: D.__dlpack_device__\(\)"):
            ts.from_dlpack(o)
    assert ts.from_dlpack(torch.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
