"""Hostile checkpoints, fourth pass (issue 22): what a weights-only load builds from a file
besides tensors' data: instance attributes restored on tensors, and the NumPy arrays and
dtypes of tessera's older pickle files (TESSERA-PICKLE), whose __setstate__ trusts its state.
The earlier passes are test_hostile_inputs.py, test_hostile_checkpoints.py and
test_hostile_sizes.py; probes that could crash run in a child interpreter (harness.run_probes).
"""
from __future__ import annotations

import copy
import io
import pickle

import pytest

import tessera as ts

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
