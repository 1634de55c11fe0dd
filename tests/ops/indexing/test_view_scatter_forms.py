"""select_scatter / slice_scatter / diagonal_scatter / nonzero_static as C++ ops
(csrc/ops/indexing_scatter.cpp) bound once, function and method (bind_index_forms.cpp):
values against PyTorch (negative indices and bounds, non-contiguous, empty), float64 gradients
and the errors (class and op name)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tessera as ts
from harness import assert_same, compare_grads

X = np.arange(24, dtype=np.float64).reshape(2, 3, 4)

CASES = [
    lambda m, t, s: m.select_scatter(t, s.select(1, -1), 1, -1),
    lambda m, t, s: t.select_scatter(s.select(0, 0), 0, 0),
    lambda m, t, s: m.slice_scatter(t, s[:, 1:], 1, 1),
    lambda m, t, s: t.slice_scatter(s[:, :, ::2], dim=2, step=2),
    lambda m, t, s: m.slice_scatter(t, s[:, :, -3:-1], dim=2, start=-3, end=-1),
    lambda m, t, s: m.slice_scatter(t, s[:, 3:], dim=1, start=5),  # empty slice
    lambda m, t, s: m.diagonal_scatter(t, s.diagonal(1, 1, 2), 1, 1, 2),
    lambda m, t, s: t.diagonal_scatter(s.diagonal(), offset=0, dim1=0, dim2=1),
    lambda m, t, s: m.diagonal_scatter(t, s.diagonal(-1, 2, 1), -1, 2, 1),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_view_scatter_matches_torch(case):
    f = CASES[case]
    src = -X - 100
    assert_same(f(ts, ts.asarray(X), ts.asarray(src)),
                f(torch, torch.from_numpy(X), torch.from_numpy(src)))
    # non-contiguous input
    xt = np.ascontiguousarray(X.transpose(2, 1, 0)).transpose(2, 1, 0)
    assert_same(f(ts, ts.asarray(X.transpose(2, 1, 0).copy()).permute(2, 1, 0), ts.asarray(src)),
                f(torch, torch.from_numpy(xt), torch.from_numpy(src)))
    compare_grads(lambda a, b: f(ts, a, b), lambda a, b: f(torch, a, b), [X, src])


def test_nonzero_static_matches_torch():
    for size, fill in ((3, -1), (30, -7), (0, 0)):
        assert_same(ts.nonzero_static(ts.asarray(X) > 10, size=size, fill_value=fill),
                    torch.nonzero_static(torch.from_numpy(X) > 10, size=size, fill_value=fill))
    assert_same(ts.asarray(X[:, ::2]).nonzero_static(size=4),
                torch.from_numpy(X[:, ::2].copy()).nonzero_static(size=4))
    assert_same(ts.zeros((0, 3)).nonzero_static(size=2),
                torch.zeros(0, 3).nonzero_static(size=2))


def test_errors_name_the_op():
    x = ts.asarray(X)
    with pytest.raises(IndexError, match="select_scatter: index 3 out of range"):
        x.select_scatter(ts.zeros((2, 4), dtype=ts.float64), 1, 3)
    with pytest.raises(RuntimeError, match="select_scatter: expected src to have a size equal"):
        x.select_scatter(ts.zeros((2, 3), dtype=ts.float64), 1, 0)
    with pytest.raises(RuntimeError, match="slice_scatter: expected src"):
        x.slice_scatter(ts.zeros((2, 3, 4), dtype=ts.float64), 1, 1)
    with pytest.raises(ValueError, match="slice_scatter: step must be positive"):
        x.slice_scatter(x, 1, step=0)
    with pytest.raises(IndexError, match="slice_scatter"):
        x.slice_scatter(x, 5)
    with pytest.raises(RuntimeError, match="diagonal_scatter: expected src"):
        x.diagonal_scatter(ts.zeros(5, dtype=ts.float64))
    with pytest.raises(TypeError, match="slice_scatter: start must be an int"):
        x.slice_scatter(x, 1, start=1.5)
    with pytest.raises(TypeError, match="size"):
        x.nonzero_static()
