"""PyTorch's zip checkpoint format both ways (issue 21): ts.load reads torch.save's files and
torch.load(weights_only=True) reads ts.save's, with dtypes, shapes, strides, storage sharing,
byte order, mmap, map_location and whole training checkpoints compared against torch 2.13."""
from __future__ import annotations

import io
import zipfile
from typing import Any, Dict

import numpy as np
import pytest
import torch

import tessera as ts

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128"]


def _torch_sample(dtype: str) -> torch.Tensor:
    x = torch.arange(24, dtype=torch.float64).reshape(4, 6) - 5
    if dtype == "bool":
        return x.remainder(3) == 0
    if dtype.startswith("uint"):
        x = x.abs()
    if dtype.startswith("complex"):
        return (x * 0.5 + 1j * x).to(getattr(torch, dtype))
    return (x * (0.5 if "float" in dtype else 1)).to(getattr(torch, dtype))


def _np(t: Any) -> np.ndarray:
    """Values as float64/complex128 NumPy for comparison (bfloat16 via float32)."""
    if isinstance(t, torch.Tensor):
        if t.dtype == torch.bfloat16:
            t = t.float()
        if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
            t = t.to(torch.int64)
        return t.detach().numpy().astype(np.complex128 if t.is_complex() else np.float64)
    if t.dtype == ts.bfloat16:
        t = t.astype(ts.float32)
    a = t.detach().numpy()
    return a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)


def _same(a: Any, b: Any) -> None:
    assert str(a.dtype).replace("torch.", "") == str(b.dtype).replace("torch.", "")
    assert tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride())
    assert a.storage_offset() == b.storage_offset()
    np.testing.assert_array_equal(_np(a), _np(b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_save_to_ts_load_every_dtype(tmp_path: Any, dtype: str) -> None:
    base = _torch_sample(dtype)
    obj = {"base": base, "view": base[1:, ::2], "t": base.t(), "scalar": base[2, 3].clone(),
           "empty": base[:0], "row": base[3]}
    path = tmp_path / "t.pt"
    torch.save(obj, path)
    got = ts.load(path)
    for k in obj:
        _same(got[k], obj[k])
    # views of one storage share memory after loading, as in torch
    assert got["view"]._storage_ptr() == got["base"]._storage_ptr()
    if dtype != "bool":
        got["base"][2, 2] = 7
        assert _np(got["view"])[1, 1] == 7 and _np(got["t"])[2, 2] == 7


@pytest.mark.parametrize("dtype", DTYPES)
def test_ts_save_to_torch_load_every_dtype(tmp_path: Any, dtype: str) -> None:
    tbase = _torch_sample(dtype)
    base = ts.load(_roundtrip_bytes(tbase))  # the same values as a tessera tensor
    obj = {"base": base, "view": base[1:, ::2], "t": base.T, "scalar": base[2, 3].clone(),
           "empty": base[:0], "row": base[3]}
    path = tmp_path / "ts.pt"
    ts.save(obj, path)
    got = torch.load(path, weights_only=True)
    for k in obj:
        _same(got[k], obj[k])
    assert got["view"].untyped_storage().data_ptr() == got["base"].untyped_storage().data_ptr()
    # and back into tessera from its own file
    back = ts.load(path)
    for k in obj:
        _same(back[k], obj[k])


def _roundtrip_bytes(t: torch.Tensor) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(t, buf)
    buf.seek(0)
    return buf


def test_file_objects_parameters_and_requires_grad() -> None:
    p = torch.nn.Parameter(torch.randn(3, 2))
    q = torch.ones(2, requires_grad=True)
    got = ts.load(_roundtrip_bytes({"p": p, "q": q, "plain": torch.ones(1)}))
    assert isinstance(got["p"], ts.nn.Parameter) and got["p"].requires_grad
    assert got["q"].requires_grad and not isinstance(got["q"], ts.nn.Parameter)
    assert not got["plain"].requires_grad
    buf = io.BytesIO()
    ts.save({"p": ts.nn.Parameter(ts.ones((3, 2))), "q": ts.ones(2, requires_grad=True),
             "n": ts.nn.Parameter(ts.ones(2), requires_grad=False)}, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)
    assert type(back["p"]) is torch.nn.Parameter and back["p"].requires_grad
    assert type(back["q"]) is torch.Tensor and back["q"].requires_grad
    assert type(back["n"]) is torch.nn.Parameter and not back["n"].requires_grad


def test_python_values_round_trip() -> None:
    obj = {"i": 3, "f": 2.5, "s": "x", "b": b"\x00\xff", "none": None, "t": (1, [2, {"k": 3}]),
           "dt": torch.float16, "dev": torch.device("cpu"), "size": torch.Size([2, 3]),
           "set": {1, 2}, "c": 1 - 2j}
    got = ts.load(_roundtrip_bytes(obj))
    assert got["dt"] == ts.float16 and str(got["dev"]) == "cpu" and tuple(got["size"]) == (2, 3)
    assert type(got["size"]) is ts.Size
    for k in ("i", "f", "s", "b", "none", "t", "set", "c"):
        assert got[k] == obj[k]
    buf = io.BytesIO()
    ts.save(dict(got), buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=True)
    assert back == obj


def test_mmap(tmp_path: Any) -> None:
    path = tmp_path / "m.pt"
    x = torch.arange(1000, dtype=torch.float32)
    torch.save({"x": x, "v": x[10:20]}, path)
    got = ts.load(path, mmap=True)
    _same(got["v"], x[10:20])
    got["x"][0] = -1  # copy-on-write: the file is not changed
    assert torch.load(path, weights_only=True)["x"][0] == 0
    assert float(got["v"][0].item()) == 10.0
    with pytest.raises(ValueError, match="file path"):
        ts.load(io.BytesIO(path.read_bytes()), mmap=True)


@pytest.mark.parametrize("where", ["cpu", "device", "torch_device", "dict", "callable",
                                   "callable_none"])
def test_map_location_forms(tmp_path: Any, where: str) -> None:
    path = tmp_path / "m.pt"
    x = torch.arange(6.0).reshape(2, 3)
    torch.save({"x": x, "v": x[:, 1]}, path)
    seen = []

    def call(storage: Any, loc: str) -> Any:
        seen.append(loc)
        return storage if where == "callable" else None
    ml = {"cpu": "cpu", "device": ts.device("cpu"), "torch_device": torch.device("cpu"),
          "dict": {"cpu": "cpu"}, "callable": call, "callable_none": call}[where]
    got = ts.load(path, map_location=ml)
    _same(got["v"], x[:, 1])
    assert got["v"]._storage_ptr() == got["x"]._storage_ptr()
    if where.startswith("callable"):
        assert seen == ["cpu"]  # once per storage, as torch


def test_cuda_location_without_cuda(tmp_path: Any) -> None:
    if ts.cuda.is_available():
        pytest.skip("needs a machine without CUDA")
    path = tmp_path / "c.pt"
    ts.save({"x": ts.ones(2)}, path)
    raw = _rewrite_record(path.read_bytes(), "data.pkl",
                          lambda b: b.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0"))
    path.write_bytes(raw)
    with pytest.raises(RuntimeError, match="CUDA"):
        ts.load(path)
    got = ts.load(path, map_location={"cuda:0": "cpu"})
    assert got["x"].tolist() == [1.0, 1.0]
    assert ts.load(path, map_location="cpu")["x"].tolist() == [1.0, 1.0]


def _rewrite_record(data: bytes, rec: str, fn: Any) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith("/" + rec):
                body = fn(body)
            zf.writestr(info.filename, body)
    return out.getvalue()


def test_big_endian_file(tmp_path: Any) -> None:
    x = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float64)
    i = torch.tensor([1, 258], dtype=torch.int16)
    path = tmp_path / "be.pt"
    torch.save({"x": x, "i": i}, path)
    data = path.read_bytes()
    data = _rewrite_record(data, "byteorder", lambda b: b"big")
    data = _rewrite_record(data, "data/0", lambda b: np.frombuffer(b, "<f8").astype(">f8").tobytes())
    data = _rewrite_record(data, "data/1", lambda b: np.frombuffer(b, "<i2").astype(">i2").tobytes())
    path.write_bytes(data)
    got = ts.load(path)
    assert got["x"].tolist() == [1.5, -2.0, 3.25] and got["i"].tolist() == [1, 258]
    want = torch.load(path, weights_only=True)
    assert want["x"].tolist() == got["x"].tolist() and want["i"].tolist() == got["i"].tolist()


def _net(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def _train_checkpoint(lib: Any) -> Dict[str, Any]:
    lib.manual_seed(0)
    model = _net(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=0.01)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4)
    for _ in range(3):
        opt.zero_grad()
        model(lib.asarray(x) if lib is ts else torch.from_numpy(x)).pow(2).mean().backward()
        opt.step()
        sched.step()
    return {"model": model.state_dict(), "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(), "epoch": 3, "history": [0.5, 0.25],
            "config": {"lr": 0.01, "layers": (4, 8, 2)}}


def _compare_checkpoints(a: Any, b: Any) -> None:
    if isinstance(a, dict):
        assert list(a) == list(b), (list(a), list(b))
        for k in a:
            _compare_checkpoints(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _compare_checkpoints(x, y)
    elif isinstance(a, (torch.Tensor, ts.Tensor)):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).replace("torch.", "") == str(b.dtype).replace("torch.", "")
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-6, atol=1e-7)
    else:
        assert a == b, (a, b)


def _restore(lib: Any, got: Dict[str, Any], ck: Dict[str, Any]) -> Any:
    """Model, optimizer and scheduler of `lib` resumed from the loaded checkpoint `got`
    (checked against the saved `ck`); returns the scheduler."""
    model = _net(lib)
    model.load_state_dict(got["model"])
    opt = lib.optim.AdamW(model.parameters(), lr=0.01)
    opt.load_state_dict(got["optimizer"])
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    sched.load_state_dict(got["scheduler"])
    _compare_checkpoints(ck["model"], model.state_dict())
    return sched


def test_training_checkpoint_torch_to_tessera(tmp_path: Any) -> None:
    ck = _train_checkpoint(torch)
    path = tmp_path / "ck.pt"
    torch.save(ck, path)
    got = ts.load(path)
    _compare_checkpoints(ck, got)
    sched = _restore(ts, got, ck)
    assert sched.get_last_lr() == pytest.approx(ck["scheduler"]["_last_lr"])


def test_training_checkpoint_tessera_to_torch(tmp_path: Any) -> None:
    ck = _train_checkpoint(ts)
    path = tmp_path / "ck.pt"
    ts.save(ck, path)
    got = torch.load(path, weights_only=True)
    _compare_checkpoints(ck, got)
    _restore(torch, got, ck)
    # and tessera reads its own file back the same
    _compare_checkpoints(ck, ts.load(path))


def test_archive_layout_matches_torch(tmp_path: Any) -> None:
    path = tmp_path / "layout.pt"
    ts.save({"a": ts.ones(3), "b": ts.zeros(2, dtype=ts.int64)}, path)
    zf = zipfile.ZipFile(path)
    names = zf.namelist()
    assert names == ["layout/data.pkl", "layout/.format_version", "layout/.storage_alignment",
                     "layout/byteorder", "layout/data/0", "layout/data/1", "layout/version",
                     "layout/.data/serialization_id"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
    raw = path.read_bytes()
    for info in zf.infolist():
        if "/data/" in info.filename:  # 64-byte aligned storages, as torch writes them
            n, e = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little"), \
                int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
            assert (info.header_offset + 30 + n + e) % 64 == 0
    assert zf.read("layout/byteorder") == b"little"
    got = torch.load(path, weights_only=True, mmap=True)
    assert got["a"].tolist() == [1.0, 1.0, 1.0]


def test_older_tessera_files_still_load(tmp_path: Any) -> None:
    import pathlib
    got = ts.load(pathlib.Path(__file__).parent / "fixtures" / "tessera_pickle_v1.pt")
    assert got["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and got["step"] == 3
    assert got["b"].dtype == ts.bfloat16 and got["i"].dtype == ts.int64
    assert got["dt"] == ts.float16 and got["s"] == {1, 2}
    # a safetensors file is recognised by its content, whatever its name
    path = tmp_path / "weights.safetensors"
    ts.save({"w": ts.ones(2)}, path)
    renamed = tmp_path / "weights.bin"
    renamed.write_bytes(path.read_bytes())
    assert ts.load(renamed)["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("weights_only", [True, False])
def test_legacy_torch_format(tmp_path: Any, weights_only: bool) -> None:
    path = tmp_path / "legacy.pt"
    base = torch.arange(6, dtype=torch.int16).reshape(2, 3)
    obj = {"x": torch.ones(2, dtype=torch.bfloat16), "base": base, "v": base[:, 1:],
           "b": torch.tensor([True, False]), "p": torch.nn.Parameter(torch.zeros(2)), "n": 5}
    torch.save(obj, path, _use_new_zipfile_serialization=False)
    got = ts.load(path, weights_only=weights_only)
    for k in ("x", "base", "v", "b", "p"):
        _same(got[k], obj[k])
    assert isinstance(got["p"], ts.nn.Parameter) and got["n"] == 5
    got["base"][1, 2] = 40
    assert got["v"].tolist() == [[1, 2], [4, 40]]  # the view shares its storage
    assert ts.load(path, map_location="cpu")["x"].dtype == ts.bfloat16


def test_format_choice_and_safetensors_mmap(tmp_path: Any) -> None:
    st = tmp_path / "w.safetensors"
    ts.save({"a": ts.arange(4.0)}, st)
    assert st.read_bytes()[8:9] == b"{"  # a .safetensors path gets safetensors
    got = ts.load(st, mmap=True)
    assert got["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    got["a"][0] = 9  # copy-on-write map: the file keeps its values
    assert ts.load(st)["a"].tolist() == [0.0, 1.0, 2.0, 3.0]
    pt = tmp_path / "w.pt"
    ts.save({"a": ts.arange(4.0)}, pt)
    assert zipfile.is_zipfile(pt)  # anything else gets torch's zip format
    ts.save({"a": ts.arange(4.0)}, pt, metadata={"k": "v"})  # metadata means safetensors
    assert ts.serialization.load_metadata(pt) == {"k": "v"}
    legacy = tmp_path / "legacy.pt"
    torch.save({"x": torch.ones(1)}, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match="mmap"):
        ts.load(legacy, mmap=True)
    with pytest.raises(ValueError, match="zip"):
        ts.save({"a": ts.ones(1)}, pt, _use_new_zipfile_serialization=False)
