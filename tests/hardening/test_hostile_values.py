"""Hostile values, second pass (issue 22): objects whose __array_interface__ lies about their
memory, Python numbers a dtype cannot hold (tensor(), masked_fill, index_fill, randint and
random_ bounds), device indices past int16, and torch.Size of things that are no sizes. Each
raised (or crashed) nothing before, or gave wrapped-around values. The first pass is
test_hostile_inputs.py; probes that could crash run in a child (harness.run_probes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from harness import run_probes


def test_array_interface_lying_about_its_memory_raises() -> None:
    # Before: a shape, strides or pointer naming memory that is not there crashed the
    # interpreter (SIGSEGV) on the first read; now the extent is checked against the
    # process's memory map (Note [Foreign memory] in csrc/python/convert.cpp).
    res = run_probes("""
        import ctypes
        keep = np.arange(4.0)
        def obj(ptr, shape=(4,), strides=None, typestr="<f8"):
            d = {"shape": shape, "typestr": typestr, "data": (ptr, False), "version": 3}
            if strides is not None:
                d["strides"] = strides
            return type("A", (), {"__array_interface__": d})()
        p = keep.ctypes.data
        probe("shape", lambda: ts.asarray(obj(p, (2**40,))))
        probe("strides", lambda: ts.tensor(obj(p, strides=(2**40,))))
        probe("negative strides", lambda: ts.as_tensor(obj(p, strides=(-2**40,))))
        probe("pointer", lambda: ts.asarray(obj(2**64 - 8)))
        probe("from_numpy", lambda: ts.from_numpy(
            np.lib.stride_tricks.as_strided(keep, (2,), (2**44,))))
        probe("fits", lambda: ts.asarray(obj(p, (3,))).tolist())
        probe("copy", lambda: ts.tensor(obj(p, (2,), (16,))).tolist())
        code = ctypes.cast(ctypes.pythonapi.Py_Initialize, ctypes.c_void_p).value
        ro = ts.asarray(obj(code, (2,), typestr="|u1"))
        probe("read-only memory", lambda: ro.add_(1))
        """)
    for name in ("shape", "strides", "negative strides", "pointer", "from_numpy"):
        cls, msg = res[name]
        assert cls == "ValueError" and "is not valid memory" in msg, (name, cls, msg)
        assert msg.startswith(("asarray:", "tensor:", "as_tensor:", "from_numpy:")), msg
    assert res["fits"] == ["ok", "[0.0, 1.0, 2.0]"] and res["copy"] == ["ok", "[0.0, 2.0]"]
    # memory mapped read-only (code) that the object claims writable: a read-only tensor
    assert res["read-only memory"][0] == "ValueError" and "read-only" in res["read-only memory"][1]


def test_numpy_arrays_numpy_owns_keep_sharing_memory() -> None:
    a = np.arange(6.0)
    for arr in (a, a[::-2], np.lib.stride_tricks.as_strided(a, (2, 2), (16, 8)),
                np.frombuffer(bytearray(16), np.float32)):
        t = ts.from_numpy(arr)
        assert t.tolist() == arr.tolist()
    t = ts.from_numpy(a[1:])
    t.add_(1)
    assert a.tolist() == [0.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@pytest.mark.parametrize("values,dtype", [
    ([300], "uint8"), ([1e300], "int64"), ([float("nan")], "int32"), ([float("inf")], "uint8"),
    ([2**40], "int32"), ([-1.5], "uint8"), ([9.3e18], "int64"), ([[1, 2], [3, 200]], "int8"),
])
def test_tensor_of_numbers_a_dtype_cannot_hold_raises_like_torch(values, dtype) -> None:
    # Before: 300 became 44 in uint8, 1e300 and NaN INT64_MIN (silent garbage).
    with pytest.raises(RuntimeError, match="without overflow"):
        torch.tensor(values, dtype=getattr(torch, dtype))
    for make in (ts.tensor, ts.as_tensor, ts.asarray):
        with pytest.raises(ValueError, match=f"value .* cannot be converted to type {dtype}"):
            make(values, dtype=getattr(ts, dtype))


def test_tensor_of_numbers_that_fit_keeps_torchs_conversions() -> None:
    for values, dtype in (([-1], "uint8"), ([-128], "uint8"), ([1.9, -1.9], "int64"),
                          ([255.0], "uint8"), ([1e40], "float32"), ([2**63], "uint64"),
                          ([True, 2], "int8"), ([float("nan"), 2], "bool"), ([], "int8")):
        want = torch.tensor(values, dtype=getattr(torch, dtype)).tolist()
        assert ts.tensor(values, dtype=getattr(ts, dtype)).tolist() == want, (values, dtype)
    with pytest.raises(ValueError, match=r"value \(1\+2j\) cannot be converted to type int64"):
        ts.tensor([1 + 2j], dtype=ts.int64)  # torch: TypeError; was 1
    assert ts.tensor([1 + 0j], dtype=ts.int64).tolist() == [1]


def test_fills_of_numbers_a_dtype_cannot_hold_raise_like_torch() -> None:
    # Before: masked_fill and index_fill wrapped the value around.
    mask = ts.tensor([True, False])
    for call in (lambda m: m.zeros(2, dtype=m.uint8).masked_fill(
                     m.tensor([True, False]), 300),
                 lambda m: m.zeros(2, dtype=m.int64).masked_fill(
                     m.tensor([True, False]), float("nan")),
                 lambda m: m.zeros(2, dtype=m.int64).index_fill(0, m.tensor([0]), 1e300)):
        with pytest.raises(RuntimeError, match="cannot be converted"):
            call(torch)
        with pytest.raises(ValueError, match="cannot be converted to type"):
            call(ts)
    x = ts.zeros(2, dtype=ts.uint8)
    with pytest.raises(ValueError, match="masked_fill_: value 256"):
        x.masked_fill_(mask, 256)
    assert x.masked_fill(mask, 255).tolist() == [255, 0]
    assert x.masked_fill(mask, ts.tensor(300)).tolist() == [44, 0]  # a tensor casts, as torch


@pytest.mark.parametrize("call", [
    lambda m: m.randint(0, 300, (3,), dtype=m.uint8),
    lambda m: m.randint(-1, 3, (3,), dtype=m.uint8),
    lambda m: m.randint(0, 2**40, (3,), dtype=m.int32),
    lambda m: m.randint_like(m.zeros(3, dtype=m.int8), 200),
    lambda m: m.zeros(3, dtype=m.float16).random_(0, 2**20),
    lambda m: m.zeros(3, dtype=m.int16).random_(-2**20, 0),
])
def test_random_integers_a_dtype_cannot_hold_raise_like_torch(call) -> None:
    # Before: randint(0, 300, dtype=uint8) drew wrapped values, random_ on float16 gave inf.
    with pytest.raises(RuntimeError, match="out of bounds"):
        call(torch)
    with pytest.raises(ValueError, match="out of bounds for"):
        call(ts)


def test_random_integers_within_the_dtype_still_draw() -> None:
    assert 0 <= int(ts.randint(0, 256, (100,), dtype=ts.uint8).min())
    assert int(ts.randint(-128, 128, (100,), dtype=ts.int8).max()) <= 127
    assert float(ts.zeros(50, dtype=ts.float16).random_(0, 65504).max()) < 65504
    assert ts.randint(0, 2**60, (3,), dtype=ts.float32).shape == (3,)  # torch: a warning


def test_device_index_out_of_range_raises() -> None:
    # Before: Device('cuda', 65537) was cuda:1 (the index wrapped to int16), -1 was kept, and a
    # bad type got pybind11's "incompatible constructor arguments".
    for index in (65537, -1, 2**70):
        with pytest.raises(ValueError, match=f"device: index {index} is out of range"):
            ts.device("cuda", index)
    for type_, index in (("cuda", "a"), ("cuda", True), (5, 0)):
        with pytest.raises(TypeError, match="device: (index|type) must be"):
            ts.device(type_, index)
    assert ts.device("cuda", 3) == ts.device("cuda:3") and ts.device("cpu", 0) == ts.device("cpu")
    assert ts.device("cuda", np.int64(2)).index == 2


def test_requires_grad_of_a_non_bool_names_the_attribute() -> None:
    t = ts.ones(2)
    with pytest.raises(TypeError, match="requires_grad.* must be bool, not str"):
        t.requires_grad = "x"
    t.requires_grad = True
    assert t.requires_grad


def test_size_holds_only_int64s_like_torch() -> None:
    # Before: ts.Size([1.5]), ts.Size([2**70]) and ts.Size([((),)]) were made.
    for bad in ([1.5], [None], [((),)]):
        with pytest.raises(TypeError):
            torch.Size(bad)
        with pytest.raises(TypeError, match="Size: takes an iterable of 'int'"):
            ts.Size(bad)
    for bad in ([2**63], [-2**63 - 1]):  # torch makes these and raises ValueError in repr()
        with pytest.raises(ValueError, match="Size: .* does not fit in int64"):
            ts.Size(bad)
    assert ts.Size([True, np.int64(3), ts.tensor(2), -1]) == (1, 3, 2, -1)
    assert list(ts.Size(range(3))) == [0, 1, 2] and ts.Size() == ()
    assert ts.ones(2, 3).size() == ts.Size([2, 3])


def test_pad_values_and_linspace_ends_a_dtype_cannot_hold_raise_like_torch() -> None:
    # Before: pad(uint8, value=300) filled 44, linspace(0, 1000, dtype=int8) wrapped around.
    for call in (lambda m: m.nn.functional.pad(m.zeros(1, dtype=m.uint8), (1, 0), value=300),
                 lambda m: m.linspace(0, 1000, 3, dtype=m.int8),
                 lambda m: m.linspace(0, float("nan"), 3, dtype=m.int32)):
        with pytest.raises(RuntimeError, match="cannot be converted"):
            call(torch)
        with pytest.raises(ValueError, match="cannot be converted to type"):
            call(ts)
    for call in (lambda m: m.nn.functional.pad(m.zeros(1, dtype=m.uint8), (1, 0), value=255),
                 lambda m: m.linspace(0, 255, 4, dtype=m.uint8),
                 lambda m: m.linspace(0, 100, 3, dtype=m.int8)):
        assert call(ts).tolist() == call(torch).tolist()
