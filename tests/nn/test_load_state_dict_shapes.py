"""load_state_dict refuses a shape mismatch for every entry as PyTorch does, 0-d buffers
included (issue 21), with torch's message format."""
from __future__ import annotations

import re
from typing import Any

import pytest
import torch

import tessera as ts


def _model(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.BatchNorm1d(2))


def _error(lib: Any, sd: Any) -> str:
    with pytest.raises(RuntimeError) as info:
        _model(lib).load_state_dict(sd)
    return str(info.value)


def _norm(msg: str) -> str:
    return re.sub(r"(torch|tessera)\.Size", "Size", msg)


@pytest.mark.parametrize("key,shape", [("1.num_batches_tracked", (2,)),
                                       ("1.num_batches_tracked", (1, 1)),
                                       ("1.num_batches_tracked", (0,)),
                                       ("1.running_mean", (3,)), ("1.running_var", ()),
                                       ("0.weight", (3, 2)), ("0.bias", (1,)),
                                       ("1.weight", (2, 1))])
def test_every_entry_shape_checked(key: str, shape: Any) -> None:
    msgs = []
    for lib in (torch, ts):
        sd = dict(_model(lib).state_dict())
        dtype = sd[key].dtype
        sd[key] = lib.zeros(shape, dtype=dtype)
        msgs.append(_norm(_error(lib, sd)))
    assert f"size mismatch for {key}: copying a param with shape" in msgs[1]
    assert msgs[0].replace("Sequential", "X") == msgs[1].replace("Sequential", "X")


def test_one_element_entry_loads_into_0d_as_torch() -> None:
    for lib in (torch, ts):
        m = _model(lib)
        sd = dict(m.state_dict())
        sd["1.num_batches_tracked"] = lib.ones(1, dtype=sd["1.num_batches_tracked"].dtype) * 7
        m.load_state_dict(sd)
        assert int(m[1].num_batches_tracked.item()) == 7


def test_all_mismatches_listed() -> None:
    msgs = []
    for lib in (torch, ts):
        sd = dict(_model(lib).state_dict())
        sd["0.weight"] = lib.zeros((5, 5))
        sd["1.num_batches_tracked"] = lib.zeros(4, dtype=sd["1.num_batches_tracked"].dtype)
        msgs.append(_norm(_error(lib, sd)))
    assert msgs[0] == msgs[1]
