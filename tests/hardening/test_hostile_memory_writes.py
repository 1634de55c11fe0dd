"""Hostile memory, fourth pass (issue 22): in-place ops that wrote into memory a tensor only
borrows read-only (a read-only NumPy array, bytes, a read-only mapping; every in-place method
and out= argument is swept), and __array_interface__ objects whose data buffer is shorter than
their shape. The earlier passes are test_hostile_inputs.py, test_hostile_values.py and
test_hostile_sizes.py; probes that could crash run in a child (harness.run_probes)."""
from __future__ import annotations

import numpy as np
import pytest

import tessera as ts
from harness import run_probes


def _read_only(values: list) -> np.ndarray:
    a = np.array(values, dtype=np.float64)
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("fill", [lambda t: t.uniform_(), lambda t: t.normal_(),
                                  lambda t: t.uniform_(-1, 1), lambda t: t.normal_(2.0, 3.0),
                                  lambda t: ts.nn.init.uniform_(t),
                                  lambda t: ts.nn.init.kaiming_normal_(t.view(2, 2))],
                         ids=["uniform_", "normal_", "uniform_ range", "normal_ mean",
                              "init.uniform_", "init.kaiming_normal_"])
def test_random_fills_of_read_only_memory_raise(fill) -> None:
    # Before: uniform_ and normal_ filled a contiguous tensor by their kernel directly, past
    # the read-only check of copy_ and fill_: a read-only NumPy array was overwritten.
    a = _read_only([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="read-only"):
        fill(ts.from_numpy(a))
    assert a.tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match=r"uniform_: the destination tensor is read-only"):
        ts.asarray(memoryview(b"\0" * 16).cast("f")).uniform_()  # bytes: read-only


def test_no_in_place_method_writes_read_only_memory() -> None:
    names = sorted(n for n in dir(ts.Tensor) if n.endswith("_") and not n.startswith("__"))
    index, mask = ts.tensor([0]), ts.tensor([True, False, False, False])
    one = ts.ones(1, dtype=ts.float64)
    four = ts.ones(4, dtype=ts.float64)
    argsets = [(), (1.0,), (four,), (0, index, 1.0), (0, index, one), (mask, 1.0), (mask, four),
               (0, 1), (index, one), ((index,), one), (0.5,), (four, 0.5), (four, four)]
    wrote = []
    for name in names:
        for args in argsets:
            a = _read_only([1.0, 2.0, 3.0, 4.0])
            try:
                getattr(ts.from_numpy(a), name)(*args)
            except Exception:  # noqa: BLE001 - any refusal is fine; a write is not
                continue
            if a.tolist() != [1.0, 2.0, 3.0, 4.0]:
                wrote.append(name)
                break
    assert wrote == []


def test_random_fills_of_writable_memory_still_fill() -> None:
    a = np.zeros(1000)
    t = ts.from_numpy(a)
    t.uniform_(2.0, 3.0)
    assert 2.0 <= a.min() and a.max() < 3.0  # the array's own memory, filled in place
    t.normal_(0.0, 1.0)
    assert abs(a.mean()) < 0.2 and 0.8 < a.std() < 1.2
    v = ts.zeros(4, 4)[:, 1]  # a strided view: filled through a buffer
    v.uniform_()
    assert v.min().item() >= 0.0 and v.max().item() < 1.0


def test_array_interface_over_a_too_short_buffer_raises() -> None:
    # Before: NumPy builds the array without comparing the shape with the buffer's length and
    # tessera trusted arrays hanging off a buffer exporter: (4,) float64 over an 8-byte
    # bytearray read 24 bytes of the heap past it (a (2**20,) one crashed on the read).
    res = run_probes("""
        def obj(shape, data, strides=None):
            d = {"shape": shape, "typestr": "<f8", "data": data, "version": 3}
            if strides is not None:
                d["strides"] = strides
            return type("A", (), {"__array_interface__": d})()
        probe("short", lambda: ts.asarray(obj((4,), bytearray(8))))
        probe("huge", lambda: ts.tensor(obj((2**20,), bytearray(8))))
        probe("strides", lambda: ts.asarray(obj((2,), bytearray(16), (16,))))
        probe("fits", lambda: ts.asarray(obj((2,), bytearray(16))).tolist())
        probe("frombuffer view", lambda: ts.asarray(
            np.frombuffer(bytearray(16), np.float32)[::-2]).tolist())
        probe("memoryview slice", lambda: ts.asarray(memoryview(bytearray(8))[2:6]).tolist())
        """)
    for name in ("short", "huge", "strides"):
        cls, msg = res[name]
        assert cls == "ValueError" and "reaches outside the" in msg and "bytearray" in msg, \
            (name, res[name])
    assert res["fits"] == ["ok", "[0.0, 0.0]"]
    assert res["frombuffer view"] == ["ok", "[0.0, 0.0]"]
    assert res["memoryview slice"] == ["ok", "[0, 0, 0, 0]"]
