"""Hostile checkpoints, fourth pass (issue 22): what a weights-only load builds from a file
besides tensors' data: instance attributes restored on tensors, and the NumPy arrays and
dtypes of tessera's older pickle files (TESSERA-PICKLE), whose __setstate__ trusts its state,
and the storage key list of PyTorch's legacy format.
The earlier passes are test_hostile_inputs.py, test_hostile_checkpoints.py and
test_hostile_sizes.py; probes that could crash run in a child interpreter (harness.run_probes).
"""
from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

import tessera as ts
from harness import run_probes
from tessera.serialization import LEGACY_PICKLE_MAGIC

P = pickle


def _u(s: str) -> bytes:
    return P.BINUNICODE + len(s.encode()).to_bytes(4, "little") + s.encode()


def _b(s: bytes) -> bytes:
    return P.BINBYTES + len(s).to_bytes(4, "little") + s


def _i(v: int) -> bytes:
    b = P.encode_long(v)
    return P.LONG1 + bytes([len(b)]) + b


def _g(module: str, name: str) -> bytes:
    return P.GLOBAL + f"{module}\n{name}\n".encode()


def _pickle(body: bytes) -> bytes:
    return P.PROTO + b"\x02" + body + P.STOP


def _dict(**items: bytes) -> bytes:
    return P.EMPTY_DICT + P.MARK + b"".join(_u(k) + v for k, v in items.items()) + P.SETITEMS


def _zip(pkl: bytes, storage: bytes) -> bytes:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/data/0", storage)
    return buf.getvalue()


def _tensor_with_state(state: bytes) -> bytes:
    """torch._tensor._rebuild_from_type_v2(_rebuild_tensor_v2, Tensor, (storage 0 as 4
    float32), state): how torch.save writes a tensor with instance attributes."""
    sid = (P.MARK + _u("storage") + _g("torch", "FloatStorage") + _u("0") + _u("cpu") + _i(4)
           + P.TUPLE + P.BINPERSID)
    args = (P.MARK + sid + _i(0) + P.MARK + _i(4) + P.TUPLE + P.MARK + _i(1) + P.TUPLE
            + P.NEWFALSE + P.EMPTY_DICT + P.TUPLE)
    return (_g("torch._tensor", "_rebuild_from_type_v2") + P.MARK
            + _g("torch._utils", "_rebuild_tensor_v2") + _g("torch", "Tensor") + args + state
            + P.TUPLE + P.REDUCE)


@pytest.mark.parametrize("name,value", [
    ("add", _g("builtins", "set")),        # t.add(1) returned set()
    ("tolist", _g("collections", "OrderedDict")),  # t.tolist() returned OrderedDict()
    ("data", _g("torch", "Tensor") + P.MARK + _i(7) + P.TUPLE + P.REDUCE),  # shape (7,)
    ("_ts_size", _i(7)),                   # t.size was 7
    ("_grad_ref", _i(7)),                  # autograd's .grad cache
], ids=["add", "tolist", "data", "_ts_size", "_grad_ref"])
def test_tensor_state_naming_tensor_attributes_is_refused(name: str, value: bytes) -> None:
    # Before: the checkpoint replaced the loaded tensor's methods, data or caches (e.g. a
    # file could make t.add(1) return an empty set, or t.size 7, under weights_only=True).
    data = _zip(_pickle(_tensor_with_state(_dict(**{name: value}))), b"\0" * 16)
    with pytest.raises(P.UnpicklingError, match=f"load: a tensor's saved attribute '{name}'"):
        ts.load(io.BytesIO(data))
    with pytest.raises(P.UnpicklingError, match=f"saved attribute '{name}'"):
        ts.load(io.BytesIO(data), weights_only=False)


def test_tensor_state_of_user_attributes_still_loads() -> None:
    t = ts.arange(4.0)
    t.note = "mine"
    t.scale = ts.tensor(2.0)
    buf = io.BytesIO()
    ts.save({"t": t}, buf)
    got = ts.load(io.BytesIO(buf.getvalue()))["t"]
    assert got.note == "mine" and got.scale.item() == 2.0 and got.add(1).tolist() == \
        [1.0, 2.0, 3.0, 4.0]
    data = _zip(_pickle(_tensor_with_state(_dict(note=_u("x")))), b"\0" * 16)
    assert ts.load(io.BytesIO(data)).note == "x"
    p = ts.nn.Parameter(ts.ones(2))
    p.tag = 1
    q = copy.deepcopy(p)  # the pickled-tensor path keeps the Parameter marker and attributes
    assert isinstance(q, ts.nn.Parameter) and q.tag == 1


# ---- TESSERA-PICKLE files: NumPy arrays and dtypes ------------------------------------------

MOD = "numpy._core.multiarray" if hasattr(np, "_core") else "numpy.core.multiarray"


def _dtype(code: str) -> bytes:
    return _g("numpy", "dtype") + P.MARK + _u(code) + P.NEWFALSE + P.NEWTRUE + P.TUPLE + P.REDUCE


def _array(shape: tuple, dtype: bytes, data: bytes, empty: tuple = (0,)) -> bytes:
    """numpy's own pickle of an array: _reconstruct(ndarray, empty, b'b') then BUILD."""
    return (_g(MOD, "_reconstruct") + P.MARK + _g("numpy", "ndarray") + P.MARK
            + b"".join(_i(n) for n in empty) + P.TUPLE + _b(b"b") + P.TUPLE + P.REDUCE
            + P.MARK + _i(1) + P.MARK + b"".join(_i(n) for n in shape) + P.TUPLE + dtype
            + P.NEWFALSE + data + P.TUPLE + P.BUILD)


def _rebuild(values: bytes, attrs: bytes = P.EMPTY_DICT, dtype: str = "float32") -> bytes:
    return (_g("tessera.serialization", "_rebuild_tensor") + P.MARK + values + _u(dtype)
            + P.NEWFALSE + attrs + P.TUPLE + P.REDUCE)


def _legacy(body: bytes) -> bytes:
    return LEGACY_PICKLE_MAGIC + _pickle(body)


def test_object_arrays_in_a_tessera_pickle_are_refused() -> None:
    # Before: an object array whose state lists fewer items than its shape crashed the
    # interpreter (SIGSEGV in NumPy's __setstate__) under the default weights_only=True.
    res = run_probes(f"""
        import pickle
        data = {_legacy(_array((1,), _dtype("O"), P.EMPTY_LIST))!r}
        probe("object array", lambda: ts.load(io.BytesIO(data)))
        fields = {_legacy(_array((1,), _dtype("V8") + P.MARK + _i(3) + _u("|") + P.NONE
                                 + P.MARK + _u("a") + P.TUPLE
                                 + _dict(a=P.MARK + _dtype("O") + _i(0) + P.TUPLE)
                                 + _i(8) + _i(1) + _i(63) + P.TUPLE + P.BUILD,
                                 _b(b"A" * 8)))!r}
        probe("object field", lambda: ts.load(io.BytesIO(fields)))
        """)
    cls, msg = res["object array"]
    assert cls == "UnpicklingError" and "no object arrays" in msg and "dtype('O')" in msg, msg
    cls, msg = res["object field"]
    assert cls == "UnpicklingError" and "no fields or subarrays" in msg, msg


@pytest.mark.parametrize("body,match", [
    # ndarray((2**30,), 'u1') and ndarray.__new__: a GiB from a few bytes, copied on load
    (_rebuild(_g("numpy", "ndarray") + P.MARK + P.MARK + _i(2**30) + P.TUPLE + _u("u1")
              + P.TUPLE + P.REDUCE, dtype="uint8"), "reduce for unrecognized function"),
    (_g("numpy", "ndarray") + P.MARK + P.MARK + _i(2**30) + P.TUPLE + P.TUPLE + P.NEWOBJ,
     "Can only create new object"),
    (_rebuild(_g(MOD, "_reconstruct") + P.MARK + _g("numpy", "ndarray") + P.MARK + _i(2**30)
              + P.TUPLE + _b(b"b") + P.TUPLE + P.REDUCE), r"expected \(numpy.ndarray, \(0,\)"),
    (_array((2**40,), _dtype("f4"), _b(b"\0" * 8)), "holds 4398046511104 bytes, its data has 8"),
    (_rebuild(_array((2,), _dtype("f4"), _b(b"\0" * 8)), dtype="__class__"),
     "unknown dtype name '__class__'"),
    (_rebuild(_array((2,), _dtype("f4"), _b(b"\0" * 8)), _dict(add=_g("numpy", "dtype"))),
     "saved attribute 'add'"),
], ids=["ndarray reduce", "ndarray newobj", "_reconstruct shape", "state size", "dtype name",
        "attribute"])
def test_numpy_objects_in_a_tessera_pickle_are_checked(body: bytes, match: str) -> None:
    # Before: 1 GiB arrays (uninitialized, then copied into a tensor) from a 60-byte file;
    # getattr(tessera, <name from the file>) as the dtype; the array's state unchecked.
    with pytest.raises(P.UnpicklingError, match=match):
        ts.load(io.BytesIO(_legacy(body)))


def test_numpy_arrays_numpy_pickles_still_load_from_tessera_pickles() -> None:
    import ml_dtypes
    for a in (np.arange(6.0).reshape(2, 3), np.arange(4, dtype=">i4"),
              np.arange(3).astype(ml_dtypes.bfloat16), np.array([True, False])):
        data = LEGACY_PICKLE_MAGIC + P.dumps({"a": a, "d": a.dtype}, 2)
        got = ts.load(io.BytesIO(data))
        np.testing.assert_array_equal(got["a"], a)
        assert got["d"] == a.dtype
    t = ts.tensor([[1.0, 2.0]])
    t.note = "kept"
    got = ts.load(io.BytesIO(LEGACY_PICKLE_MAGIC + P.dumps(t, 2)))
    assert got.tolist() == [[1.0, 2.0]] and got.note == "kept"



# ---- PyTorch's legacy (pre-zip) format: the storage key list --------------------------------

def _legacy_torch_file(times: int) -> bytes:
    """A torch.save(_use_new_zipfile_serialization=False) file of tensor [0, 1, 2, 3] whose
    storage key list names its one storage `times` times (each with its data after it)."""
    import torch
    buf = io.BytesIO()
    torch.save(torch.arange(4.0), buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    at = raw.rfind(P.PROTO + b"\x02" + P.EMPTY_LIST)  # the key list, then count and data
    key = P.loads(raw[at:])[0]
    data = (4).to_bytes(8, "little") + np.arange(4, dtype=np.float32).tobytes()
    assert raw[at:].endswith(data)
    return raw[:at] + P.dumps([key] * times, 2) + data * times


def test_legacy_storages_without_data_or_with_two_are_refused() -> None:
    # Before: a key list leaving a storage out loaded it as zeros (torch: uninitialized
    # memory); a key listed twice read two blocks of data, the second one winning.
    assert ts.load(io.BytesIO(_legacy_torch_file(1))).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"storage\(s\) \['\d+'\] have no data in the file"):
        ts.load(io.BytesIO(_legacy_torch_file(0)))
    with pytest.raises(ValueError, match=r"storage key '\d+' is listed twice"):
        ts.load(io.BytesIO(_legacy_torch_file(2)))


# ---- what a loaded state dict holds ---------------------------------------------------------

@pytest.mark.parametrize("extra", ["weight.x", "0.weight.x", "1", "0.bias.a.b"])
def test_state_dict_keys_below_a_tensor_are_unexpected_like_torch(extra: str) -> None:
    # Before: a key "weight.x" (or a submodule name with no dot, "1") was taken as belonging
    # to the parameter and passed the strict check silently; torch reports it.
    import torch
    tm = torch.nn.Linear(2, 2) if extra.startswith("weight") else \
        torch.nn.Sequential(torch.nn.Linear(2, 2))
    m = ts.nn.Linear(2, 2) if extra.startswith("weight") else ts.nn.Sequential(ts.nn.Linear(2, 2))
    tsd = {**tm.state_dict(), extra: torch.ones(1)}
    with pytest.raises(RuntimeError, match=f'Unexpected key\\(s\\) in state_dict: "{extra}"'):
        tm.load_state_dict(tsd)
    with pytest.raises(RuntimeError, match=f'Unexpected key\\(s\\) in state_dict: "{extra}"'):
        m.load_state_dict({**m.state_dict(), extra: ts.ones(1)})
    got = m.load_state_dict({**m.state_dict(), extra: ts.ones(1)}, strict=False)
    assert got.unexpected_keys == [extra] and got.missing_keys == []
    assert not m.load_state_dict(m.state_dict()).unexpected_keys
