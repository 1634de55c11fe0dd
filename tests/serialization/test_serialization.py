"""ts.save / ts.load: safetensors round trips, interop with the safetensors package and
PyTorch, a hand-written file, errors."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn
from tessera.serialization import load_metadata

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


def _sample(dtype: str, shape=(3, 4)) -> ts.Tensor:
    x = np.arange(int(np.prod(shape))).reshape(shape) - 5
    if dtype == "bool":
        return ts.asarray(x % 3 == 0)
    if dtype == "uint8":
        x = np.abs(x)
    return ts.asarray(x * (0.5 if "float" in dtype else 1)).astype(getattr(ts, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_every_dtype(tmp_path, dtype: str) -> None:
    sd = {"a": _sample(dtype), "scalar": _sample(dtype, ()), "empty": _sample(dtype, (0, 3)),
          "strided": _sample(dtype, (4, 6))[::2, ::-3]}
    path = tmp_path / "x.safetensors"
    ts.save(sd, path)
    back = ts.load(path)
    assert sorted(back) == sorted(sd)
    for k in sd:
        assert back[k].dtype == sd[k].dtype and back[k].shape == sd[k].shape
        np.testing.assert_array_equal(back[k].numpy().astype(np.float64), sd[k].numpy().astype(np.float64))


def test_interop_with_safetensors_package_and_torch(tmp_path) -> None:
    from safetensors.numpy import load_file as np_load, save_file as np_save
    from safetensors.torch import load_file as torch_load, save_file as torch_save
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                             torch.nn.Linear(3, 2).to(torch.bfloat16))
    p1 = tmp_path / "torch.safetensors"
    torch_save(tm.state_dict(), str(p1))
    sm = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Linear(3, 2).to(ts.bfloat16))
    sm.load_state_dict(ts.load(p1))
    for (k, a), (_, b) in zip(sm.state_dict().items(), tm.state_dict().items()):
        np.testing.assert_array_equal(a.astype(ts.float64).numpy(), b.double().numpy())
    # tessera -> safetensors (torch and numpy readers)
    p2 = tmp_path / "ts.safetensors"
    ts.save(sm.state_dict(), p2, metadata={"format": "pt"})
    back = torch_load(str(p2))
    for k, v in tm.state_dict().items():
        assert back[k].dtype == v.dtype and torch.equal(back[k], v)
    arrays = {"f": np.linspace(0, 1, 7).astype(np.float16), "i": np.arange(5, dtype=np.int32)}
    p3 = tmp_path / "np.safetensors"
    np_save(arrays, str(p3))
    got = ts.load(p3)
    for k in arrays:
        np.testing.assert_array_equal(got[k].numpy(), arrays[k])
    ts.save({k: ts.asarray(v) for k, v in arrays.items()}, p3)
    for k, v in np_load(str(p3)).items():
        np.testing.assert_array_equal(v, arrays[k])
    assert load_metadata(p2) == {"format": "pt"}


def test_hand_written_file(tmp_path) -> None:
    header = {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
              "n": {"dtype": "I64", "shape": [], "data_offsets": [16, 24]}}
    h = json.dumps(header).encode()
    body = struct.pack("<4f", 1.5, -2.0, 3.25, 0.0) + struct.pack("<q", -7)
    path = tmp_path / "hand.safetensors"
    path.write_bytes(struct.pack("<Q", len(h)) + h + body)
    d = ts.load(path)
    np.testing.assert_array_equal(d["w"].numpy(), [[1.5, -2.0], [3.25, 0.0]])
    assert d["n"].dtype == ts.int64 and int(d["n"].item()) == -7
    # Our writer produces exactly this layout (sorted keys, 8-byte aligned header).
    ts.save(d, path)
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    assert n % 8 == 0
    hdr = json.loads(raw[8:8 + n])
    assert hdr["n"] == {"dtype": "I64", "shape": [], "data_offsets": [0, 8]}
    assert hdr["w"]["data_offsets"] == [8, 24]
    assert raw[8 + n:] == struct.pack("<q", -7) + struct.pack("<4f", 1.5, -2.0, 3.25, 0.0)


def test_loaded_tensors_own_their_memory(tmp_path) -> None:
    path = tmp_path / "x.safetensors"
    ts.save({"x": ts.ones((3,))}, path)
    d = ts.load(path)
    path.write_bytes(b"\0" * 64)  # overwriting the file does not change loaded tensors
    np.testing.assert_array_equal(d["x"].numpy(), [1, 1, 1])


def test_errors(tmp_path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x05")
    with pytest.raises(ValueError, match="too short"):
        ts.load(bad)
    bad.write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(ValueError, match="exceeds the file size"):
        ts.load(bad)
    h = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    bad.write_bytes(struct.pack("<Q", len(h)) + h + b"\0" * 8)
    with pytest.raises(ValueError, match="do not match shape"):
        ts.load(bad)
    h = json.dumps({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}).encode()
    bad.write_bytes(struct.pack("<Q", len(h)) + h + b"\0")
    with pytest.raises(ValueError, match="unsupported dtype"):
        ts.load(bad)
    # Not a flat dict of tensors: pickled as torch.save does (tests/torch_api/test_top_level_functions.py).
    ts.save([ts.ones(2)], tmp_path / "y.pt")
    assert ts.load(tmp_path / "y.pt")[0].tolist() == [1.0, 1.0]


def test_deepcopy_and_pickle_modules() -> None:
    import copy
    import pickle
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2).to(ts.bfloat16))
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert all(isinstance(p, nn.Parameter) for p in clone.parameters())
        for (k, a), (_, b) in zip(clone.state_dict().items(), m.state_dict().items()):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.astype(ts.float64).numpy(), b.astype(ts.float64).numpy())
        with ts.no_grad():
            clone[0].weight[...] = 0
        assert not np.all(m[0].weight.numpy() == 0)  # independent storage
    x = ts.ones((2, 2), requires_grad=True)
    pair = copy.deepcopy([x, x])
    assert pair[0] is pair[1] and pair[0].requires_grad
