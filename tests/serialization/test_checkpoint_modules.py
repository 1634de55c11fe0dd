"""Whole pickled nn.Modules through save/load, with weights_only=False and with
weights_only=True plus safe_globals listing the classes, as in PyTorch (issue 21)."""
from __future__ import annotations

import io
import pickle
from typing import Any, List

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import serialization

NAMES = ["Sequential", "Linear", "ReLU", "BatchNorm1d", "Dropout", "LayerNorm"]


def _model(lib: Any) -> Any:
    lib.manual_seed(0)
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.BatchNorm1d(6), nn.Dropout(0.25),
                         nn.LayerNorm(6), nn.Linear(6, 2)).eval()


def _classes(lib: Any) -> List[Any]:
    return [getattr(lib.nn, n) for n in NAMES]


def _save(lib: Any, obj: Any) -> io.BytesIO:
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return buf


def _out(m: Any, lib: Any) -> np.ndarray:
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = m(lib.asarray(x) if lib is ts else torch.from_numpy(x))
    return np.asarray(y.detach().numpy(), np.float64)


@pytest.mark.parametrize("lib", [ts, torch], ids=["tessera", "torch"])
def test_whole_module_weights_only_false(lib: Any) -> None:
    m = _model(lib)
    back = lib.load(_save(lib, m), weights_only=False)
    assert type(back) is type(m) and repr(back) == repr(m)
    np.testing.assert_array_equal(_out(back, lib), _out(m, lib))
    assert all(isinstance(p, lib.nn.Parameter) for p in back.parameters())
    assert not back.training


@pytest.mark.parametrize("lib", [ts, torch], ids=["tessera", "torch"])
def test_whole_module_needs_safe_globals(lib: Any) -> None:
    m = _model(lib)
    buf = _save(lib, m)
    with pytest.raises(pickle.UnpicklingError, match="Sequential"):
        lib.load(buf, weights_only=True)
    ser = serialization if lib is ts else torch.serialization
    buf.seek(0)
    with ser.safe_globals(_classes(lib)):
        back = lib.load(buf, weights_only=True)
    np.testing.assert_array_equal(_out(back, lib), _out(m, lib))
    assert not set(_classes(lib)) & set(ser.get_safe_globals())
    buf.seek(0)
    ser.add_safe_globals(_classes(lib)[:2])  # not enough: ReLU is missing
    try:
        with pytest.raises(pickle.UnpicklingError, match="ReLU"):
            lib.load(buf, weights_only=True)
        buf.seek(0)
        ser.add_safe_globals(_classes(lib)[2:])
        lib.load(buf, weights_only=True)
    finally:
        ser.clear_safe_globals()


def test_tuple_form_of_safe_globals() -> None:
    class Box:
        def __init__(self, v: Any) -> None:
            self.v = v
    Box.__module__, Box.__qualname__ = "mymod", "Box"
    pkl = (pickle.PROTO + b"\x02" + pickle.GLOBAL + b"mymod\nBox\n" + pickle.EMPTY_TUPLE
           + pickle.NEWOBJ + pickle.EMPTY_DICT + pickle.BINUNICODE + b"\x01\x00\x00\x00v"
           + pickle.BININT1 + b"\x07" + pickle.SETITEM + pickle.BUILD + pickle.STOP)
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/data.pkl", pkl)
    with serialization.safe_globals([(Box, "mymod.Box")]):
        buf.seek(0)
        assert ts.load(buf).v == 7
    with serialization.safe_globals([Box]):
        buf.seek(0)
        assert ts.load(buf).v == 7
    with pytest.raises(ValueError, match="length"):
        with serialization.safe_globals([(Box, "a", "b")]):
            buf.seek(0)
            ts.load(buf)


def test_torch_pickled_module_loads_into_tessera() -> None:
    tm = _model(torch)
    got = ts.load(_save(torch, tm), weights_only=False)
    assert type(got) is ts.nn.Sequential and type(got[0]) is ts.nn.Linear
    np.testing.assert_allclose(_out(got, ts), _out(tm, torch), rtol=1e-5, atol=1e-6)
    # and with weights_only=True when tessera's classes are allowed under torch's names
    with serialization.safe_globals([(c, f"torch.nn.modules.{p}.{n}") for c, p, n in
                                     [(ts.nn.Sequential, "container", "Sequential"),
                                      (ts.nn.Linear, "linear", "Linear"),
                                      (ts.nn.ReLU, "activation", "ReLU"),
                                      (ts.nn.BatchNorm1d, "batchnorm", "BatchNorm1d"),
                                      (ts.nn.Dropout, "dropout", "Dropout"),
                                      (ts.nn.LayerNorm, "normalization", "LayerNorm")]]):
        got = ts.load(_save(torch, tm))
    np.testing.assert_allclose(_out(got, ts), _out(tm, torch), rtol=1e-5, atol=1e-6)


def test_get_unsafe_globals_in_checkpoint_matches_torch(tmp_path: Any) -> None:
    path = tmp_path / "m.pt"
    torch.save({"model": _model(torch), "sd": _model(torch).state_dict(), "s": {1}}, path)
    want = torch.serialization.get_unsafe_globals_in_checkpoint(path)
    got = serialization.get_unsafe_globals_in_checkpoint(path)
    assert sorted(got) == sorted(want) and "torch.nn.modules.container.Sequential" in got
    ts.save({"sd": _model(ts).state_dict()}, path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == []
    ts.save(_model(ts), path)
    with serialization.safe_globals(_classes(ts)):
        assert serialization.get_unsafe_globals_in_checkpoint(path) == []
    assert "tessera.nn.modules.linear.Linear" in serialization.get_unsafe_globals_in_checkpoint(path)
