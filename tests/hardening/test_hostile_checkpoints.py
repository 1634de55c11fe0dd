"""Hostile checkpoints, second pass (issue 22): pickles whose tuples nest too deep or share
too much to hash (a crash or a hang in torch.load too), objects that nest past the recursion
limit or contain themselves under map_location, codecs and dtypes a file names that the
restricted unpickler must refuse cleanly. The first pass is test_hostile_inputs.py; the
probes that could crash or hang run in a child interpreter (harness.run_probes)."""
from __future__ import annotations

import io
import pickle
from typing import Any

import pytest

import tessera as ts
from harness import checkpoint_zip, run_probes
from tessera.serialization import LEGACY_PICKLE_MAGIC


def _pickle(body: bytes) -> bytes:
    return pickle.PROTO + b"\x02" + body + pickle.STOP


def _u(s: str) -> bytes:
    return pickle.BINUNICODE + len(s).to_bytes(4, "little") + s.encode()


# The hostile pickles (built here and in the child interpreter of the probes).
HOSTILE_TUPLES_SRC = """
import pickle
P, E = pickle, pickle.PROTO + b"\\x02"
DEEP = P.EMPTY_TUPLE + P.TUPLE1 * 200_000  # 200,000 nested tuples
SHARED = P.EMPTY_TUPLE + (P.DUP + P.TUPLE2) * 64  # t = (t, t): 2^64 steps to hash
MEMO = P.EMPTY_TUPLE + (P.BINPUT + b"\\x00" + P.BINGET + b"\\x00" + P.TUPLE2) * 64
HOSTILE_TUPLES = {k: E + v + P.STOP for k, v in {
    "dict key": P.EMPTY_DICT + DEEP + P.NONE + P.SETITEM,
    "set item": P.EMPTY_SET + P.MARK + DEEP + P.ADDITEMS,
    "frozenset": P.MARK + DEEP + P.FROZENSET,
    "TUPLE": P.EMPTY_DICT + P.MARK * 5000 + P.EMPTY_TUPLE + P.TUPLE * 5000 + P.NONE + P.SETITEM,
    "TUPLE3": P.MARK + P.EMPTY_TUPLE + (P.NONE + P.NONE + P.TUPLE3) * 5000 + P.NONE + P.DICT,
    "shared key": P.EMPTY_DICT + SHARED + P.NONE + P.SETITEM,
    "shared via memo": P.EMPTY_DICT + MEMO + P.NONE + P.SETITEM,
}.items()}
"""


def test_tuples_too_deep_or_too_shared_to_hash_are_refused() -> None:
    # Before: hashing the key crashed the interpreter (SIGSEGV: tuple hashes recurse in C
    # without a check; torch.load crashes on the same file) or ran 2^64 steps.
    res = run_probes(HOSTILE_TUPLES_SRC + """
import zipfile
from tessera.serialization import LEGACY_PICKLE_MAGIC
def as_zip(pkl):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
    return buf.getvalue()
for name, pkl in HOSTILE_TUPLES.items():
    probe(name, lambda: ts.load(io.BytesIO(as_zip(pkl))))
    probe(name + ", legacy", lambda: ts.load(io.BytesIO(LEGACY_PICKLE_MAGIC + pkl)))
""")
    assert len(res) == 14
    for name, (cls, msg) in res.items():
        assert cls == "UnpicklingError" and "tuples nested" in msg, (name, cls, msg)
        assert ("1001 deep" in msg) != ("shared" in name), (name, msg)


def test_tuples_a_checkpoint_holds_still_load() -> None:
    obj = {(1, (2, (3, (4,)))): [((1, 2), (1, 2))] * 3, "s": {(1, 2), (3, (4, 5))},
           "x": ts.arange(3.0)}
    for raw in (True, False):
        buf = io.BytesIO()
        if raw:
            ts.save(obj, buf)
        else:
            buf.write(LEGACY_PICKLE_MAGIC + pickle.dumps(obj, 2))
        got = ts.load(io.BytesIO(buf.getvalue()), weights_only=True)
        assert got[(1, (2, (3, (4,))))] == [((1, 2), (1, 2))] * 3
        assert got["s"] == {(1, 2), (3, (4, 5))}
    nested = _pickle(pickle.EMPTY_DICT + pickle.EMPTY_TUPLE + pickle.TUPLE1 * 999 + pickle.NONE
                     + pickle.SETITEM)
    assert len(ts.load(io.BytesIO(checkpoint_zip(nested)))) == 1  # 1000 deep is the limit


def test_map_location_over_deep_or_self_referencing_objects() -> None:
    # Before: RecursionError ("maximum recursion depth exceeded") for both.
    deep = _pickle(pickle.MARK * 5000 + pickle.LIST * 5000)
    with pytest.raises(ValueError, match="map_location: .* nests containers deeper"):
        ts.load(io.BytesIO(LEGACY_PICKLE_MAGIC + deep), map_location="cpu")
    assert len(ts.load(io.BytesIO(LEGACY_PICKLE_MAGIC + deep))) == 1  # without: as torch
    a: Any = []
    a.append(a)
    d: Any = {"t": ts.ones(2)}
    d["self"] = d
    data = LEGACY_PICKLE_MAGIC + pickle.dumps({"a": a, "d": d}, 2)
    got = ts.load(io.BytesIO(data), map_location="cpu", weights_only=False)
    assert got["a"][0] is got["a"] and got["d"]["self"] is got["d"]
    assert got["d"]["t"].tolist() == [1.0, 1.0]


def test_globals_called_with_junk_raise_unpickling_errors() -> None:
    g = pickle.GLOBAL
    cases = {
        # an unknown codec: LookupError escaped
        "codec": g + b"builtins\nbytearray\n" + _u("abc") + _u("rot13") + pickle.TUPLE2
        + pickle.REDUCE,
        # a dtype name instead of a dtype: loaded as float64 (torch: TypeError)
        "dtype": g + b"torch._utils\n_rebuild_device_tensor_from_cpu_tensor\n" + pickle.MARK
        + g + b"torch\nSize\n" + pickle.EMPTY_TUPLE + pickle.REDUCE + _u("float64") + _u("cpu")
        + pickle.NEWFALSE + pickle.TUPLE + pickle.REDUCE,
        # a Size of floats, of nested tuples, of an int past int64 (torch: TypeError/ValueError)
        "size float": g + b"torch\nSize\n" + pickle.MARK + pickle.BINFLOAT + b"?\xf8\0\0\0\0\0\0"
        + pickle.TUPLE + pickle.TUPLE1 + pickle.REDUCE,
        "size tuple": g + b"torch\nSize\n" + pickle.EMPTY_TUPLE + pickle.TUPLE1 + pickle.TUPLE1
        + pickle.REDUCE,
        "size huge": g + b"torch\nSize\n" + pickle.MARK + pickle.LONG1 + b"\x09" + b"\0" * 8
        + b"\x01" + pickle.TUPLE + pickle.TUPLE1 + pickle.REDUCE,
        # a device index past int16 (wrapped around before) or of the wrong type
        "device": g + b"torch\ndevice\n" + _u("cuda") + pickle.LONG1 + b"\x03\x01\x00\x01"
        + pickle.TUPLE2 + pickle.REDUCE,
    }
    for name, body in cases.items():
        with pytest.raises(pickle.UnpicklingError) as info:
            ts.load(io.BytesIO(checkpoint_zip(_pickle(body))))
        assert "std::" not in str(info.value) and "pybind11" not in str(info.value), name
        assert "incompatible" not in str(info.value), (name, str(info.value))


def _st(header: Any, body: bytes = b"") -> bytes:
    import json
    h = json.dumps(header).encode()
    return len(h).to_bytes(8, "little") + h + body


def test_safetensors_key_order_and_empty_shapes_from_a_file(tmp_path: Any) -> None:
    # Before: a key order naming the int 1 for the tensor "1" raised KeyError, a deeply
    # nested one RecursionError; shape [0, 2**63] NumPy's "Maximum allowed dimension
    # exceeded" (no file named), [0, 2**62] loaded but failed in repr.
    entry = {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
    for order in ("[1]", "[" * 100_000 + "]" * 100_000, '[["1"]]', '["1", "1"]'):
        got = ts.load(io.BytesIO(_st({"1": entry, "__metadata__": {"tessera.key_order": order}},
                                     b"\0" * 4)))
        assert list(got) == ["1"]
    for shape in ([0, 2**63], [2**64, 0]):
        with pytest.raises(ValueError, match=r"load: .*'a' has an invalid shape"):
            ts.load(io.BytesIO(_st({"a": {"dtype": "F32", "shape": shape,
                                          "data_offsets": [0, 0]}})))
    path = tmp_path / "e.safetensors"
    path.write_bytes(_st({"a": {"dtype": "I8", "shape": [0, 2**62], "data_offsets": [0, 0]}}))
    for mmap in (False, True):
        a = ts.load(path, mmap=mmap)["a"]
        assert a.shape == (0, 2**62) and a.dtype == ts.int8
        assert repr(a) == "tensor([], shape=(0, 4611686018427387904), dtype=int8)"


def test_safetensors_mmap_of_an_unaligned_header_copies(tmp_path: Any) -> None:
    # Before: mmap=True raised "copy=False but this array (misaligned)" when the header did
    # not pad the data to the element size.
    path = tmp_path / "u.safetensors"
    data = _st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)
    assert (len(data) - 8) % 4
    path.write_bytes(data)
    a = ts.load(path, mmap=True)["a"]
    a.add_(1)
    assert a.tolist() == [1.0, 1.0] and path.read_bytes() == data  # copy-on-write either way
