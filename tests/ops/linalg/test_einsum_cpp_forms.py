"""einsum bound in C++ (csrc/ops/einsum.cpp, csrc/python/bind_einsum.cpp): equations against torch
over shapes, broadcasting, layouts and dtypes, the call forms, float64 gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import assert_same, compare_grads, same_as_torch, strided_views

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]), ("...ij->...ji", [(2, 1, 3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("...ij,...jk", [(2, 3, 4), (1, 4, 2)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]), ("iij->j", [(3, 3, 2)]), ("ijk,k,j->i", [(2, 3, 4), (4,), (3,)]),
    ("i,->i", [(3,), ()]), ("Ab,bC->AC", [(2, 3), (3, 2)]), ("ij,jk->", [(0, 3), (3, 2)]),
]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_einsum_matches_torch(data):
    eq, shapes = data.draw(st.sampled_from(EQUATIONS))
    dt = data.draw(st.sampled_from(["float32", "float64", "complex64"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    arrs = [rng.standard_normal(s).astype(dt) for s in shapes]
    arrs = [strided_views(data.draw, a) for a in arrs]
    want = torch.einsum(eq, *[torch.from_numpy(np.array(a)) for a in arrs])
    assert_same(ts.einsum(eq, *[ts.asarray(a) for a in arrs]), want, rtol=1e-4, atol=1e-4)


def test_einsum_call_forms_and_promotion():
    a, b = np.random.default_rng(0).standard_normal((2, 3, 4)), np.ones((4, 5), dtype=np.float32)
    want = torch.einsum("bij,jk->bik", torch.from_numpy(a), torch.from_numpy(b).double())
    assert_same(ts.einsum("bij,jk->bik", [ts.asarray(a), ts.asarray(b)]), want)
    assert_same(ts.einsum(ts.asarray(a), [0, 1, 2], ts.asarray(b), [2, 3], [0, 1, 3]), want)
    assert_same(ts.einsum(ts.asarray(a), [Ellipsis, 2], ts.asarray(b), [2, 3]),
                torch.einsum(torch.from_numpy(a), [Ellipsis, 2], torch.from_numpy(b).double(),
                             [2, 3]))
    assert_same(ts.einsum("ij,jk->ik", ts.asarray(a[0]), ts.asarray(b), optimize="greedy"),
                torch.from_numpy(a[0]) @ torch.from_numpy(b).double())


def test_einsum_gradients():
    rng = np.random.default_rng(1)
    for eq, shapes in EQUATIONS[:12]:
        arrs = [rng.standard_normal(s) for s in shapes]
        compare_grads(lambda *xs, eq=eq: ts.einsum(eq, *xs),
                      lambda *xs, eq=eq: torch.einsum(eq, *xs), arrs)


def test_einsum_errors():
    with pytest.raises(ValueError, match="einsum"):
        ts.einsum("ij,jk->ik", ts.ones((2, 3)), ts.ones((4, 5)))
    with pytest.raises(RuntimeError, match="einsum"):
        ts.einsum("ij->ik", ts.ones((2, 3)))
    with pytest.raises(ValueError, match="operand subscripts"):
        ts.einsum("ij,jk", ts.ones((2, 3)))
    with pytest.raises(ValueError, match="invalid subscript"):
        ts.einsum("i1->i", ts.ones((2, 3)))
    with pytest.raises(ValueError, match="range"):
        ts.einsum(ts.ones(2), [60])
    same_as_torch(lambda m: m.einsum("ii->i", m.ones((2, 3))))
    same_as_torch(lambda m: m.einsum("ij->jj", m.ones((2, 3))))
    same_as_torch(lambda m: m.einsum("ij"))
