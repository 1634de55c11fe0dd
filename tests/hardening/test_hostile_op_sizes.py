"""Hostile sizes given to ops, fourth pass (issue 22): pads, scale factors, counts and lengths at
the ends of int64 that wrapped around into a small, wrong result (silent garbage) or reached
the allocator unchecked. The earlier passes are test_hostile_inputs.py (the sweep of extreme
integer arguments), test_hostile_sizes.py and test_hardening_inputs.py; probes that could
crash or hang run in a child interpreter (harness.run_probes)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from harness import run_probes

F = ts.nn.functional
M = 2**63 - 1


@pytest.mark.parametrize("pad,mode", [
    ((M, M), "replicate"), ((M, M), "circular"), ((M, 0), "replicate"),
    ((2**62, 2**62), "replicate"), ((-1, M), "reflect"), ((M, M), "constant"),
    ((-2**63, 0), "constant"), ((-2**63, 0), "circular"),
])
def test_pads_whose_padded_size_overflows_int64_raise(pad, mode) -> None:
    # Before: (2^63-1, 2^63-1) replicate-padded a dim of 3 to 3 + 2(2^63-1), wrapped around to
    # 1: a (1, 1, 1) result (torch: [[[0.]]], as wrong); (2^63-1, 0) leaked "cannot create
    # std::vector larger than max_size()".
    x = ts.ones(1, 1, 3)
    with pytest.raises(ValueError, match=rf"pad: {mode} padding .* gives a size past int64"):
        F.pad(x, pad, mode=mode)
    with pytest.raises(ValueError, match="past int64"):
        F.pad(ts.ones(1, 1, 3, dtype=ts.int64), pad, mode=mode)  # the per-axis path


def test_large_pads_raise_memory_error_naming_the_size() -> None:
    res = run_probes("""
        probe("replicate", lambda: F.pad(ts.ones(1, 1, 3), (2**40, 0), mode="replicate"))
        probe("constant", lambda: F.pad(ts.ones(3), (2**40, 2**40)))
        """)
    for name, (cls, msg) in res.items():
        assert cls == "MemoryError" and "GiB" in msg, (name, cls, msg)


@pytest.mark.parametrize("pad,mode", [
    ((-1, 2), "replicate"), ((-4, 5), "replicate"), ((-1, 2), "reflect"), ((2, 3), "reflect"),
    ((-1, 2), "circular"), ((2, -1), "circular"), ((-1, -1), "circular"), ((3, 4), "replicate"),
    ((-2**62, 2**62 + 5), "replicate"), ((4, 4), "circular"),
])
def test_pads_that_fit_match_torch(pad, mode) -> None:
    x = np.arange(4.0).reshape(1, 1, 4)
    want = torch.nn.functional.pad(torch.tensor(x), pad, mode=mode)
    for dtype in (ts.float64, ts.int64):  # the kernel and the per-axis path
        got = F.pad(ts.tensor(x, dtype=dtype), pad, mode=mode)
        assert got.tolist() == want.tolist(), (pad, mode, dtype)
    # (torch cannot take this one: "SymIntArrayRef expected to contain only concrete integers")
    assert F.pad(ts.tensor(x), (-M, M), mode="replicate").tolist() == [[[3.0] * 4]]
