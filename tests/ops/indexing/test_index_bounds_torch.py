"""Index bounds of PyTorch's index-based ops against torch: which ops count a negative index
from the end (x[idx], take, put_, index_fill, take_along_dim with a dim) and which raise
(gather / scatter* with torch's RuntimeError; index_select / index_add / index_copy /
index_reduce with its IndexError), for indices drawn from [-n - 1, n]."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from harness import arrays, same_as_torch

DTYPES = ["float32", "float64", "int64", "int32", "bool"]


@st.composite
def dim_case(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    dtype = draw(st.sampled_from(DTYPES))
    a = draw(arrays(dtype, shape))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    ishape = tuple(draw(st.integers(1, s)) if i != dim % len(shape) else draw(st.integers(1, 4))
                   for i, s in enumerate(shape))
    idx = draw(arrays("int64", ishape, elements=st.integers(-n - 1, n)))
    vec = draw(arrays("int64", (draw(st.integers(1, 3)),), elements=st.integers(-n - 1, n)))
    return a, dim, idx, vec


def _t(m, a):
    return m.asarray(np.array(a))


def _source(m, a, dim, k):
    shape = list(a.shape)
    shape[dim] = k
    return m.ones(shape, dtype=_t(m, a).dtype)


@given(dim_case())
def test_gather_family_bounds_match_torch(case):
    a, dim, idx, _ = case
    same_as_torch(lambda m: m.gather(_t(m, a), dim, _t(m, idx)).tolist(), exact_error=True)
    src = lambda m: m.ones(idx.shape, dtype=_t(m, a).dtype)
    same_as_torch(lambda m: m.scatter(_t(m, a), dim, _t(m, idx), 1).tolist(), exact_error=True)
    same_as_torch(lambda m: _t(m, a).scatter_(dim, _t(m, idx), src(m)).tolist()
                  if (idx >= 0).all() and len(np.unique(idx)) == idx.size else
                  _t(m, a).scatter_(dim, _t(m, idx), 1).tolist(), exact_error=True)
    if a.dtype != np.bool_:
        same_as_torch(lambda m: m.scatter_add(_t(m, a), dim, _t(m, idx), src(m)).tolist(),
                      exact_error=True)
        same_as_torch(lambda m: _t(m, a).scatter_reduce(dim, _t(m, idx), src(m), "amax").tolist(),
                      exact_error=True)
    # with a dim, take_along_dim counts negatives from the end (out of range is unchecked in
    # torch, so only in-range indices are compared)
    inr = np.where(idx >= a.shape[dim], 0, np.where(idx < -a.shape[dim], 0, idx))
    if inr.shape[dim % a.ndim] and all(i == s or i == 1 for i, s in zip(inr.shape, a.shape)):
        same_as_torch(lambda m: m.take_along_dim(_t(m, a), _t(m, inr), dim).tolist(),
                      exact_error=True)


@given(dim_case())
def test_index_vector_bounds_match_torch(case):
    a, dim, _, vec = case
    k = len(vec)
    same_as_torch(lambda m: m.index_select(_t(m, a), dim, _t(m, vec)).tolist(), exact_error=True)
    same_as_torch(lambda m: _t(m, a).index_select(dim, _t(m, vec)).tolist(), exact_error=True)
    same_as_torch(lambda m: _t(m, a).index_fill(dim, _t(m, vec), 1).tolist(), exact_error=True)
    uniq = len(np.unique(vec % a.shape[dim])) == k
    if uniq:  # repeated indices write in an unspecified order
        same_as_torch(lambda m: _t(m, a).index_copy(dim, _t(m, vec), _source(m, a, dim, k)).tolist(),
                      exact_error=True)
    if a.dtype != np.bool_:
        same_as_torch(lambda m: _t(m, a).index_add(dim, _t(m, vec), _source(m, a, dim, k)).tolist(),
                      exact_error=True)
        same_as_torch(lambda m: _t(m, a).index_add_(dim, _t(m, vec), _source(m, a, dim, k)).tolist(),
                      exact_error=True)
        same_as_torch(lambda m: _t(m, a).index_reduce(dim, _t(m, vec), _source(m, a, dim, k),
                                                      "amax").tolist(), exact_error=True)


@given(dim_case())
def test_flat_index_bounds_match_torch(case):
    a, _, _, vec = case
    flat = np.where(vec < 0, vec * a.size // max(1, a.shape[0]), vec)  # reach both ends
    same_as_torch(lambda m: m.take(_t(m, a), _t(m, flat)).tolist(), exact_error=True)
    same_as_torch(lambda m: _t(m, a)[_t(m, vec)].tolist(), exact_error=True)
    if len(np.unique(flat % a.size)) == len(flat):
        same_as_torch(lambda m: _t(m, a).put_(_t(m, flat), m.ones(len(flat), dtype=_t(m, a).dtype))
                      .tolist(), exact_error=True)


@pytest.mark.parametrize("op", ["gather", "scatter", "scatter_add"])
def test_gather_scatter_error_names_op_and_bounds(op):
    import tessera as ts
    x = ts.zeros(3)
    args = (0, ts.asarray([-1])) + (() if op == "gather" else (ts.ones(1),))
    with pytest.raises(RuntimeError, match=rf"{op}: index -1 is out of bounds for dimension 0 "
                                           r"with size 3; hint: indices must be in \[0, 3\)"):
        getattr(ts, op)(x, *args)


def test_index_select_error_names_op_and_value():
    import tessera as ts
    with pytest.raises(IndexError, match=r"index_select: index -1 is out of bounds for dimension 0"
                                         r" with size 3 \(index out of range in self\)"):
        ts.zeros((3, 2)).index_select(0, ts.asarray([0, -1]))
