"""ts.load(weights_only=True) never runs code from a file (issue 22): exact (module, name)
allow-list pairs, no dotted attribute paths, Python 2 names mapped before the check, and the
same refusals as torch.load on the same bytes."""
from __future__ import annotations

import io
import os
import pickle
from typing import Any

import numpy as np
import pytest
import torch

import tessera as ts
from harness import checkpoint_zip
from tessera import serialization


def _global(module: str, name: str) -> bytes:
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def _unicode(s: str) -> bytes:
    b = s.encode()
    return pickle.BINUNICODE + len(b).to_bytes(4, "little") + b


def _exploit_stack_global(cmd: str) -> bytes:
    """Protocol 4: numpy.dtypes.__builtins__.get('eval')(cmd) by STACK_GLOBAL's dotted
    names (the 90-byte file of issue 22)."""
    return (pickle.PROTO + b"\x04" + _unicode("numpy.dtypes") + _unicode("__builtins__.get")
            + pickle.STACK_GLOBAL + _unicode("eval") + pickle.TUPLE1 + pickle.REDUCE
            + _unicode(cmd) + pickle.TUPLE1 + pickle.REDUCE + pickle.STOP)


def _exploit_global(cmd: str) -> bytes:
    """The same through the GLOBAL opcode (dotted names resolve from protocol 4 on)."""
    return (pickle.PROTO + b"\x04" + _global("numpy.dtypes", "__builtins__.get")
            + _unicode("eval") + pickle.TUPLE1 + pickle.REDUCE + _unicode(cmd) + pickle.TUPLE1
            + pickle.REDUCE + pickle.STOP)


def _exploit_plain(cmd: str) -> bytes:
    return (pickle.PROTO + b"\x02" + _global("builtins", "eval") + _unicode(cmd)
            + pickle.TUPLE1 + pickle.REDUCE + pickle.STOP)


EXPLOITS = [_exploit_stack_global, _exploit_global, _exploit_plain]


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("make", EXPLOITS)
@pytest.mark.parametrize("container", ["zip", "legacy", "raw"])
def test_exploit_never_runs(tmp_path: Any, make: Any, container: str) -> None:
    marker = tmp_path / "marker"
    cmd = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    pkl = make(cmd)
    if make is not _exploit_plain:
        # The file is a real exploit: plain pickle runs it (so this test can fail).
        pickle.loads(pkl)
        assert marker.exists()
        marker.unlink()
    data = {"zip": checkpoint_zip(pkl), "legacy": serialization.LEGACY_PICKLE_MAGIC + pkl,
            "raw": pkl}[container]
    path = tmp_path / "evil.pt"
    path.write_bytes(data)
    err = pickle.UnpicklingError if container != "raw" else ValueError
    with pytest.raises(err):
        ts.load(path)
    with pytest.raises(err):
        ts.load(io.BytesIO(data))
    assert not marker.exists()
    if container == "zip":  # torch refuses the same file
        with pytest.raises(pickle.UnpicklingError):
            torch.load(path, weights_only=True)
        assert not marker.exists()


def test_dotted_names_and_prefixes_are_refused(tmp_path: Any) -> None:
    for module, name in [("collections", "OrderedDict.fromkeys"), ("numpy.dtypes", "Float64DType"),
                         ("numpy.dtypes.os", "system"), ("builtins", "getattr"),
                         ("torch", "Tensor.__init__"), ("torch._utils", "_rebuild_tensor_v2.x"),
                         ("collections.OrderedDict", "")]:
        pkl = pickle.PROTO + b"\x02" + _global(module, name) + pickle.STOP
        path = tmp_path / "g.pt"
        path.write_bytes(checkpoint_zip(pkl))
        with pytest.raises(pickle.UnpicklingError, match="allowed global|blocked"):
            ts.load(path)


def test_blocked_modules_even_when_listed(tmp_path: Any) -> None:
    pkl = pickle.PROTO + b"\x02" + _global("os", "getcwd") + pickle.EMPTY_TUPLE + pickle.REDUCE \
        + pickle.STOP
    path = tmp_path / "os.pt"
    path.write_bytes(checkpoint_zip(pkl))
    with serialization.safe_globals([(os.getcwd, "os.getcwd")]):
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            ts.load(path)
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            with torch.serialization.safe_globals([(os.getcwd, "os.getcwd")]):
                torch.load(path, weights_only=True)


def test_python2_names_are_mapped_before_the_check(tmp_path: Any) -> None:
    # protocol 2 writes builtins.set as __builtin__.set (issue 21: a saved set must load)
    for lib in (ts, torch):
        path = tmp_path / f"set_{lib.__name__}.pt"
        lib.save({"a": {1, 2}, "f": frozenset(), "c": 1 + 2j, "b": bytearray(b"xy")}
                 if lib is ts else {"a": {1, 2}, "c": 1 + 2j, "b": bytearray(b"xy")}, path)
        got = ts.load(path) if lib is torch else ts.load(path, weights_only=False)
        assert got["a"] == {1, 2} and got["c"] == 1 + 2j and got["b"] == bytearray(b"xy")
    path = tmp_path / "set.pt"
    ts.save({"a": {1, 2}}, path)
    assert ts.load(path)["a"] == {1, 2}
    assert torch.load(path, weights_only=True)["a"] == {1, 2}
    # the mapped name is still checked: __builtin__.eval -> builtins.eval is refused
    pkl = pickle.PROTO + b"\x02" + _global("__builtin__", "eval") + pickle.STOP
    path.write_bytes(checkpoint_zip(pkl))
    with pytest.raises(pickle.UnpicklingError, match="eval"):
        ts.load(path)


def test_numpy_arrays_refused_unless_allowed_as_torch(tmp_path: Any) -> None:
    path = tmp_path / "np.pt"
    torch.save({"a": np.arange(3.0)}, path)
    for load in (ts.load, lambda p: torch.load(p, weights_only=True)):
        with pytest.raises(pickle.UnpicklingError):
            load(path)
    allow = [np.core.multiarray._reconstruct if hasattr(np, "core") else None, np.ndarray,
             np.dtype, type(np.dtype(np.float64))]
    allow = [a for a in allow if a is not None]
    with torch.serialization.safe_globals(allow):
        want = torch.load(path, weights_only=True)["a"]
    with serialization.safe_globals(allow):
        got = ts.load(path)["a"]
    np.testing.assert_array_equal(got, want)
    assert serialization.get_safe_globals() == []


def test_safe_globals_api() -> None:
    serialization.clear_safe_globals()
    serialization.add_safe_globals([ts.nn.Linear])
    assert serialization.get_safe_globals() == [ts.nn.Linear]
    with serialization.safe_globals([ts.nn.ReLU]):
        assert set(serialization.get_safe_globals()) == {ts.nn.Linear, ts.nn.ReLU}
    assert serialization.get_safe_globals() == [ts.nn.Linear]
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


def test_refusals_of_the_restricted_interpreter(tmp_path: Any) -> None:
    path = tmp_path / "x.pt"
    cases = [
        # BUILD on a non-allowed instance
        pickle.PROTO + b"\x02" + pickle.EMPTY_LIST + pickle.EMPTY_DICT + pickle.BUILD + pickle.STOP,
        # APPEND to a dict
        pickle.PROTO + b"\x02" + pickle.EMPTY_DICT + pickle.NONE + pickle.APPEND + pickle.STOP,
        # huge bytearray from an int
        pickle.PROTO + b"\x02" + _global("builtins", "bytearray") + pickle.BININT
        + (2 ** 31 - 1).to_bytes(4, "little") + pickle.TUPLE1 + pickle.REDUCE + pickle.STOP,
        # NEWOBJ of a C++ type would give a tensor with nothing behind it
        pickle.PROTO + b"\x02" + _global("torch", "device") + pickle.EMPTY_TUPLE + pickle.NEWOBJ
        + pickle.STOP,
        # persistent id that is no storage
        pickle.PROTO + b"\x02" + _unicode("x") + pickle.TUPLE1 + pickle.BINPERSID + pickle.STOP,
        # truncated, unknown opcode, memo miss
        pickle.PROTO + b"\x02" + pickle.BINUNICODE + b"\xff\xff\x00\x00ab",
        pickle.PROTO + b"\x02" + b"\xfe" + pickle.STOP,
        pickle.PROTO + b"\x02" + pickle.BINGET + b"\x07" + pickle.STOP,
        pickle.PROTO + b"\x02" + pickle.STOP,
    ]
    for pkl in cases:
        path.write_bytes(checkpoint_zip(pkl))
        with pytest.raises(pickle.UnpicklingError):
            ts.load(path)
