"""ts.einsum against numpy.einsum: explicit/implicit outputs, ellipsis, traces and diagonals,
sums over lone indices, several operands, broadcasting, dtypes and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tessera as ts
from harness import assert_same, strided_views

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("...ij->...ji", [(2, 3, 4)]),
    ("i...->...", [(3, 2, 4)]),
    ("...", [(2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,bc,cd,da->", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 3)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ijk->kji", [(2, 3, 4)]),
    ("ii,jj->ij", [(3, 3), (2, 2)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("Ab,bA->A", [(3, 2), (2, 3)]),
    ("i,i,i->i", [(4,), (4,), (4,)]),
    ("ij,kl->ijkl", [(2, 3), (1, 2)]),
    ("ij,j->i", [(3, 0), (0,)]),
    ("ij,jk->ik", [(0, 4), (4, 5)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),
    ("ij,ij->i", [(3, 1), (1, 4)]),
]


@pytest.mark.parametrize("subs,shapes", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
def test_einsum_cases(subs, shapes, dtype):
    rng = np.random.default_rng(0)
    ops = [(rng.standard_normal(s) * 3).astype(dtype) for s in shapes]
    want = np.einsum(subs, *ops)
    got = ts.einsum(subs, *[ts.asarray(o) for o in ops])
    assert_same(got, np.asarray(want), rtol=1e-4 if dtype == "float32" else 1e-10,
                atol=1e-4 if dtype == "float32" else 1e-10)


@given(st.integers(1, 4), st.integers(0, 3), st.integers(1, 4), st.integers(0, 3),
       st.sampled_from(["float32", "float64", "complex64"]), st.data())
def test_einsum_batched_matmul_strided(b, m, k, n, dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = strided_views(data.draw, rng.standard_normal((b, m, k)).astype(dtype))
    y = strided_views(data.draw, rng.standard_normal((b, k, n)).astype(dtype))
    assert_same(ts.einsum("bmk,bkn->bmn", ts.asarray(x), ts.asarray(y)),
                np.einsum("bmk,bkn->bmn", x, y), rtol=1e-4, atol=1e-5)


def test_einsum_promotes_and_is_view_when_possible():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.ones(3, dtype=np.float32)
    got = ts.einsum("ij,j->i", ts.asarray(a), ts.asarray(b))
    assert got.dtype == ts.float32  # tessera's rule: int with float -> the float's dtype
    assert_same(got, np.einsum("ij,j->i", a, b), check_dtype=False)
    x = ts.asarray(np.arange(9.0).reshape(3, 3))
    d = ts.einsum("ii->i", x)
    assert d.shape == (3,) and d.tolist() == [0.0, 4.0, 8.0]


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(3, 4), (5, 6)]),
    ("ij->ik", [(3, 4)]),
    ("ij->ii", [(3, 3)]),
    ("ij,jk", [(3, 4)]),
    ("ijk", [(3, 4)]),
    ("i1", [(3, 4)]),
    ("ii", [(3, 4)]),
    ("i.j", [(3, 4)]),
])
def test_einsum_errors(subs, shapes):
    ops = [ts.asarray(np.ones(s)) for s in shapes]
    with pytest.raises(ValueError, match="einsum"):
        ts.einsum(subs, *ops)


def test_einsum_operand_list_and_optimize():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    assert_same(ts.einsum("ij,jk->ik", [ts.asarray(a), ts.asarray(b)]), a @ b)
    assert_same(ts.einsum("ij,jk->ik", ts.asarray(a), ts.asarray(b), optimize=False), a @ b)


def test_einsum_type_errors():
    with pytest.raises(TypeError, match="einsum"):
        ts.einsum(["i"], ts.asarray(np.ones(2)))


@st.composite
def einsum_problem(draw):
    """Random subscripts over a small alphabet (repeats, lone and shared labels, ellipsis)."""
    sizes = {c: draw(st.integers(0, 3)) for c in "abcde"}
    nops = draw(st.integers(1, 3))
    use_ell = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    terms, shapes = [], []
    for _ in range(nops):
        labels = draw(st.lists(st.sampled_from("abcde"), max_size=3))
        shape = tuple(sizes[c] for c in labels)
        term = "".join(labels)
        if use_ell and draw(st.booleans()):
            k = draw(st.integers(0, len(ell_shape)))
            term = "..." + term
            shape = ell_shape[len(ell_shape) - k:] + shape
        terms.append(term)
        shapes.append(shape)
    used = sorted({c for t in terms for c in t if c != "."})
    if draw(st.booleans()):
        out = draw(st.permutations(used)).__iter__()
        out = "".join(c for c in out if draw(st.booleans()))
        if use_ell and any("..." in t for t in terms):
            out = "..." + out
        subs = ",".join(terms) + "->" + out
    else:
        subs = ",".join(terms)
    return subs, shapes


@given(einsum_problem(), st.sampled_from(["float64", "int64", "complex128"]),
       st.integers(0, 2**32 - 1))
def test_einsum_random_subscripts(problem, dtype, seed):
    subs, shapes = problem
    rng = np.random.default_rng(seed)
    ops = [(rng.standard_normal(s) * 3).astype(dtype) for s in shapes]
    want = np.einsum(subs, *ops)
    got = ts.einsum(subs, *[ts.asarray(o) for o in ops])
    assert_same(got, np.asarray(want), rtol=1e-9, atol=1e-9)
