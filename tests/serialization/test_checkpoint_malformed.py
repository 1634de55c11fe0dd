"""Malformed checkpoint files (issue 22): every malformed safetensors file raises ValueError
naming the file and what is wrong (never TypeError, KeyError, RecursionError or a NumPy
error), declared sizes are checked before anything is allocated, and hypothesis fuzzes the
safetensors reader, the zip reader and the unpickler with mutated valid files (only the
documented exceptions may come out).

TESSERA_FUZZ_EXAMPLES sets the examples per fuzzer (CI: the default, a few seconds)."""
from __future__ import annotations

import functools
import io
import json
import os
import pickle
import struct
import zipfile
from typing import Any, List, Tuple

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import tessera as ts
from tessera._weights_only_unpickler import DeviceUnavailable

EXAMPLES = int(os.environ.get("TESSERA_FUZZ_EXAMPLES", "60"))
ALLOWED = (ValueError, pickle.UnpicklingError, DeviceUnavailable)


def _st_file(header: Any, body: bytes = b"", raw_header: bytes = None) -> bytes:
    h = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + body


BAD = [
    ("not a JSON object", _st_file([1, 2])),
    ("unsupported dtype", _st_file({"x": {"dtype": 5, "shape": [1], "data_offsets": [0, 4]}},
                                   b"\0" * 4)),
    ("invalid shape", _st_file({"x": {"dtype": "F32", "shape": "ab", "data_offsets": [0, 4]}},
                               b"\0" * 4)),
    ("invalid shape", _st_file({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}},
                               b"\0" * 4)),
    ("invalid shape", _st_file({"x": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}},
                               b"\0" * 4)),
    ("invalid shape", _st_file({"x": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}},
                               b"\0" * 4)),
    ("invalid data_offsets", _st_file({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4)),
    ("invalid data_offsets", _st_file({"x": {"dtype": "F32", "shape": [1],
                                             "data_offsets": [0]}}, b"\0" * 4)),
    ("invalid data_offsets", _st_file({"x": {"dtype": "F32", "shape": [1],
                                             "data_offsets": ["0", 4]}}, b"\0" * 4)),
    ("do not match shape", _st_file({"x": {"dtype": "F32", "shape": [2 ** 62, 2 ** 62],
                                           "data_offsets": [0, 4]}}, b"\0" * 4)),
    ("do not match shape", _st_file({"x": {"dtype": "F32", "shape": [1],
                                           "data_offsets": [4, 0]}}, b"\0" * 4)),
    ("packed", _st_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
                        b"\0" * 8)),
    ("packed", _st_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                         "y": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
                        b"\0" * 4)),
    ("bytes of data", _st_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}},
                               b"\0" * 12)),
    ("bytes of data", _st_file({"x": {"dtype": "F32", "shape": [2 ** 61],
                                      "data_offsets": [0, 2 ** 63]}}, b"\0" * 4)),
    ("is not a JSON object", _st_file({"x": [1, 2]}, b"")),
    ("__metadata__", _st_file({"__metadata__": {"a": 1}})),
    ("__metadata__", _st_file({"__metadata__": [1]})),
    ("invalid safetensors header", _st_file(None, raw_header=b"{" * 100000)),
    ("invalid safetensors header", _st_file(None, raw_header=b'{"a": [' + b"[" * 5000 + b"]")),
    ("invalid safetensors header", _st_file(None, raw_header=b"{\xff\xfe}")),
    ("invalid safetensors header", _st_file(None, raw_header=b'{"a":1,"a":2}')),
    ("exceeds the file size", struct.pack("<Q", 2 ** 64 - 1) + b"{}"),
    ("too short", b"{}"),
]


@pytest.mark.parametrize("what,data", BAD, ids=[f"{i}-{w}" for i, (w, _) in enumerate(BAD)])
def test_malformed_safetensors(tmp_path: Any, what: str, data: bytes) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=what) as info:
        ts.load(path)
    assert str(path) in str(info.value)
    with pytest.raises(ValueError, match=what):
        ts.load(io.BytesIO(data))


def test_bool_bytes_are_normalised(tmp_path: Any) -> None:
    path = tmp_path / "b.safetensors"
    path.write_bytes(_st_file({"b": {"dtype": "BOOL", "shape": [3], "data_offsets": [0, 3]}},
                              bytes([0, 2, 255])))
    b = ts.load(path)["b"]
    assert b.tolist() == [False, True, True] and int(b.sum().item()) == 2


def test_malformed_zip_checkpoints(tmp_path: Any) -> None:
    good = io.BytesIO()
    ts.save({"x": ts.arange(4.0)}, good)
    data = good.getvalue()
    path = tmp_path / "z.pt"
    cases: List[bytes] = [data[:len(data) // 2], data[:40], b"PK\x03\x04" + b"\0" * 100]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:  # compressed
        for info in zipfile.ZipFile(io.BytesIO(data)).infolist():
            zf.writestr(info.filename, zipfile.ZipFile(io.BytesIO(data)).read(info))
    cases.append(buf.getvalue())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:  # two folders
        zf.writestr("a/data.pkl", b"")
        zf.writestr("b/data.pkl", b"")
    cases.append(buf.getvalue())
    for case in cases:
        path.write_bytes(case)
        with pytest.raises(ValueError, match=str(path)):
            ts.load(path)
    # a storage record shorter than the pickle declares
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info in src.infolist():
            body = src.read(info)
            zf.writestr(info.filename, body[:-4] if info.filename.endswith("data/0") else body)
    path.write_bytes(buf.getvalue())
    with pytest.raises(ValueError, match="declares"):
        ts.load(path)


def test_tensor_views_beyond_their_storage_are_refused(tmp_path: Any) -> None:
    for size, stride, offset in [((5,), (1,), 0), ((2,), (2 ** 61 + 1,), 0), ((1,), (1,), 4),
                                 ((0,), (1,), 5), ((2, 2), (2, 2 ** 62), 0)]:
        x = torch.arange(4.0)
        buf = io.BytesIO()
        torch.save(x, buf)
        pkl = zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("archive/data.pkl")
        # rebuild the pickle by hand with the hostile view
        import pickletools  # noqa: F401
        hostile = (pickle.PROTO + b"\x02" + pickle.GLOBAL + b"torch._utils\n_rebuild_tensor_v2\n"
                   + pickle.MARK + pickle.MARK + _u("storage") + pickle.GLOBAL
                   + b"torch\nFloatStorage\n" + _u("0") + _u("cpu") + pickle.BININT1 + b"\x04"
                   + pickle.TUPLE + pickle.BINPERSID + _int(offset) + _tuple(size)
                   + _tuple(stride) + pickle.NEWFALSE + pickle.EMPTY_DICT + pickle.TUPLE
                   + pickle.REDUCE + pickle.STOP)
        assert pkl  # the real file has the same structure
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as zf:
            zf.writestr("archive/data.pkl", hostile)
            zf.writestr("archive/data/0", x.numpy().tobytes())
        out.seek(0)
        with pytest.raises(ValueError, match="beyond its storage"):
            ts.load(out)


def _u(s: str) -> bytes:
    return pickle.BINUNICODE + struct.pack("<I", len(s)) + s.encode()


def _int(v: int) -> bytes:
    return pickle.LONG1 + bytes([len(pickle.encode_long(v))]) + pickle.encode_long(v) if v \
        else pickle.BININT1 + b"\x00"


def _tuple(vals: Any) -> bytes:
    return pickle.MARK + b"".join(_int(v) for v in vals) + pickle.TUPLE


# ----------------------------------------------------------------------------- fuzzing
@functools.lru_cache(maxsize=None)
def _seeds() -> Tuple[bytes, ...]:
    out = []
    buf = io.BytesIO()
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    torch.save({"w": base, "v": base[:, 1], "n": 3, "s": {1}, "p": torch.nn.Parameter(
        torch.ones(2, dtype=torch.bfloat16)), "u": torch.ones(2, dtype=torch.uint16)}, buf)
    out.append(buf.getvalue())
    buf = io.BytesIO()
    ts.save({"w": ts.arange(6.0).reshape(2, 3), "l": [ts.ones(2), (1, "a")]}, buf)
    out.append(buf.getvalue())
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _safetensors_seed() -> bytes:
    h = {"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
         "b": {"dtype": "I64", "shape": [1], "data_offsets": [16, 24]},
         "__metadata__": {"k": "v"}}
    return _st_file(h, b"\x01" * 24)


@functools.lru_cache(maxsize=None)
def _legacy_seed() -> bytes:
    buf = io.BytesIO()
    torch.save({"x": torch.ones(3), "v": torch.ones(3)[1:], "n": 2}, buf,
               _use_new_zipfile_serialization=False)
    return buf.getvalue()


@st.composite
def _mutated(draw: Any, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "set", "cut", "insert", "delete", "int"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set" and data:
            data[pos] = draw(st.integers(0, 255))
        elif kind == "cut":
            del data[pos:]
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 8))]
        elif kind == "int":
            v = draw(st.sampled_from([0, 1, 255, 2 ** 31 - 1, 2 ** 32 - 1, 2 ** 63 - 1,
                                      2 ** 64 - 1]))
            data[pos:pos + 8] = v.to_bytes(8, "little")
    return bytes(data)


def _check(data: bytes, **kw: Any) -> None:
    try:
        ts.load(io.BytesIO(data), **kw)
    except ALLOWED:
        pass
    try:
        ts.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
    except ALLOWED:
        pass


_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                     suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(st.data())
def test_fuzz_zip_and_unpickler(data: Any) -> None:
    seed = data.draw(st.sampled_from(_seeds()))
    _check(data.draw(_mutated(seed)))


@_SETTINGS
@given(st.data())
def test_fuzz_pickle_bytes_in_a_valid_zip(data: Any) -> None:
    # mutate only data.pkl, keep the zip valid: reaches the unpickler every time
    seed = _seeds()[0]
    src = zipfile.ZipFile(io.BytesIO(seed))
    pkl = data.draw(_mutated(src.read("archive/data.pkl")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info in src.infolist():
            zf.writestr(info.filename, pkl if info.filename.endswith("data.pkl")
                        else src.read(info))
    _check(out.getvalue())
    _check(out.getvalue(), weights_only=True, map_location="cpu")


@_SETTINGS
@given(st.data())
def test_fuzz_safetensors(data: Any) -> None:
    _check(data.draw(_mutated(_safetensors_seed())))


@_SETTINGS
@given(st.data())
def test_fuzz_legacy_formats(data: Any) -> None:
    seed = data.draw(st.sampled_from([_legacy_seed(), ts.serialization.LEGACY_PICKLE_MAGIC
                                      + pickle.dumps({"a": [1, 2.5, "x"], "b": {3}}, 2)]))
    _check(data.draw(_mutated(seed)))
