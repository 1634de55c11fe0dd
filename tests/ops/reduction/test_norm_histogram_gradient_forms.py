"""torch.norm / dist / renorm / histogram / combinations / gradient and Tensor.sum_to_size, bound
in C++ (csrc/python/bind_statistics_torch.cpp): values against torch over shapes, dtypes,
argument forms and layouts, float64 gradients, and the errors."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import arrays, assert_same, compare_grads, same_as_torch, shapes, strided_views

P_FORMS = [None, "fro", 2, 1, 3, 0.5, 0, math.inf, -math.inf]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_norm_matches_torch(data):
    dt = data.draw(st.sampled_from(["float32", "float64", "complex64"]))
    a = data.draw(arrays(dt, shapes(0, 3, 1, 4)))
    a = strided_views(data.draw, a)
    p = data.draw(st.sampled_from(P_FORMS))
    dim = data.draw(st.sampled_from([None, 0, -1, (0,), (0, -1), []])) if a.ndim else \
        data.draw(st.sampled_from([None, 0, -1]))
    if isinstance(dim, tuple) and a.ndim < 2:
        dim = (0,)
    keep = data.draw(st.booleans())
    kw = {} if p is None else {"p": p}
    want = torch.norm(torch.from_numpy(a.copy()), dim=dim, keepdim=keep, **kw)
    got = ts.norm(ts.asarray(a), dim=dim, keepdim=keep, **kw)
    assert_same(got, want, rtol=1e-4, atol=1e-4)
    assert_same(ts.asarray(a).norm(**kw), torch.from_numpy(a.copy()).norm(**kw), rtol=1e-4,
                atol=1e-4)


def test_norm_forms():
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    x, t = ts.asarray(a), torch.from_numpy(a)
    assert_same(ts.norm(x, 2, 1), torch.norm(t, 2, 1))
    assert_same(ts.norm(x, "nuc", (0, 2), True), torch.norm(t, "nuc", (0, 2), True))
    assert_same(ts.norm(x[0], "nuc"), torch.norm(t[0], "nuc"))
    assert_same(ts.norm(x.astype(ts.float32), dtype=ts.float64),
                torch.norm(t.float(), dtype=torch.float64))
    same_as_torch(lambda m: m.norm(m.ones(3, dtype=m.float64), dtype=m.float32))
    assert_same(x.norm(p=1, dim=[0, 1]), t.norm(p=1, dim=[0, 1]))
    out = ts.empty((3, 5), dtype=ts.float64)
    assert ts.norm(x, 2, 1, out=out) is out
    assert_same(out, torch.norm(t, 2, 1))
    assert_same(ts.dist(x, x[0] + 1, 3), torch.dist(t, t[0] + 1, 3))
    assert_same(x.dist(x * 2), t.dist(t * 2))


def test_norm_gradients():
    a = np.random.default_rng(1).standard_normal((3, 4))
    for p in (2, 1, 3, math.inf, "fro", "nuc"):
        compare_grads(lambda x: ts.norm(x, p), lambda x: torch.norm(x, p), [a])
    compare_grads(lambda x: ts.norm(x, 2, 1, True), lambda x: torch.norm(x, 2, 1, True), [a])
    compare_grads(lambda x, y: ts.dist(x, y, 1.5), lambda x, y: torch.dist(x, y, 1.5),
                  [a, a[0] * 2])


def test_norm_errors():
    with pytest.raises(RuntimeError, match="norm: input dtype should be either floating point"):
        ts.norm(ts.asarray([1, 2]))
    with pytest.raises(RuntimeError, match="norm: cannot compute the inf norm over dimension 0"):
        ts.norm(ts.ones((0, 3)), math.inf, 0)
    with pytest.raises(RuntimeError, match="invalid norm type"):
        ts.norm(ts.ones(3), "abc")
    with pytest.raises(IndexError):
        ts.norm(ts.ones((2, 3)), 2, 5)
    same_as_torch(lambda m: m.norm(m.ones((2, 3)), "nuc", (0,)))
    same_as_torch(lambda m: m.dist(m.ones(2), [1.0, 2.0]))
    same_as_torch(lambda m: m.norm(m.tensor([1, 2])))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_renorm_matches_torch(data):
    a = data.draw(arrays("float64", shapes(2, 4, 1, 4)))
    p = data.draw(st.sampled_from([1, 2, 3.5]))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    m = data.draw(st.sampled_from([0.0, 1.0, 50.0]))
    want = torch.renorm(torch.from_numpy(a), p, dim, m)
    assert_same(ts.renorm(ts.asarray(a), p, dim, m), want)
    x = ts.asarray(a.copy())
    x.renorm_(p, dim, m)
    assert_same(x, want)


def test_renorm_gradient_and_errors():
    a = np.random.default_rng(2).standard_normal((3, 4)) * 3
    compare_grads(lambda x: ts.renorm(x, 2, 0, 1.5), lambda x: torch.renorm(x, 2, 0, 1.5), [a])
    compare_grads(lambda x: x.renorm(1, 1, 2.0), lambda x: x.renorm(1, 1, 2.0), [a])
    same_as_torch(lambda m: m.renorm(m.ones(3), 2, 0, 1.0))
    same_as_torch(lambda m: m.renorm(m.ones((2, 3)), -1, 0, 1.0))
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions"):
        ts.renorm(ts.ones(3), 2, 0, 1.0)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_sum_to_size_matches_torch(data):
    a = data.draw(arrays("float64", shapes(0, 4, 0, 4)))
    size = tuple(data.draw(st.sampled_from([1, n])) for n in a.shape)
    size = size[data.draw(st.integers(0, len(size))):]
    want = torch.from_numpy(a).sum_to_size(size)
    assert_same(ts.asarray(a).sum_to_size(size), want)
    assert_same(ts.asarray(a).sum_to_size(*size), want)


def test_sum_to_size_gradient_and_errors():
    a = np.random.default_rng(3).standard_normal((2, 3, 4))
    compare_grads(lambda x: x.sum_to_size(3, 1), lambda x: x.sum_to_size(3, 1), [a])
    same_as_torch(lambda m: m.ones((2, 3)).sum_to_size(2, 2))
    same_as_torch(lambda m: m.ones((2, 3)).sum_to_size(1, 2, 3))
    with pytest.raises(RuntimeError, match=r"sum_to_size: size \(2, 2\) is not expandable"):
        ts.ones((2, 3)).sum_to_size(2, 2)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_histogram_matches_torch(data):
    dt = data.draw(st.sampled_from(["float32", "float64"]))
    a = data.draw(arrays(dt, shapes(0, 3, 0, 6), elements=st.floats(-10, 10, width=32)))
    bins = data.draw(st.integers(1, 7))
    rng = data.draw(st.sampled_from([None, (-5.0, 5.0), (0.0, 0.0)]))
    density = data.draw(st.booleans())
    use_w = data.draw(st.booleans())
    w = np.asarray(np.abs(a) + 1) if use_w else None
    if a.size == 0 and rng is None:
        rng = (0.0, 1.0)
    kw = {"range": rng, "density": density}
    want = torch.histogram(torch.from_numpy(a), bins,
                           weight=None if w is None else torch.from_numpy(w), **kw)
    got = ts.histogram(ts.asarray(a), bins, weight=None if w is None else ts.asarray(w), **kw)
    assert type(got).__name__ == "histogram" and got._fields == ("hist", "bin_edges")
    assert_same(got.bin_edges, want.bin_edges, rtol=1e-6, atol=1e-6)
    assert_same(got.hist, want.hist, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bins", [1, 2, 5])
@pytest.mark.parametrize("shape", [(0,), (0, 3)])
def test_histogram_of_empty_input_spans_zero_to_one_like_torch(shape, bins):
    want = torch.histogram(torch.zeros(shape), bins)
    got = ts.histogram(ts.zeros(shape), bins)
    assert_same(got.bin_edges, want.bin_edges)
    assert_same(got.hist, want.hist)


def test_histogram_edges_and_forms():
    a = np.array([0.0, 1.0, 2.0, 2.0, 5.0, 11.0, 12.0])
    edges = np.array([0.0, 2.0, 5.0, 11.0])
    want = torch.histogram(torch.from_numpy(a), torch.from_numpy(edges), density=True)
    got = ts.histogram(ts.asarray(a), ts.asarray(edges), density=True)
    assert_same(got.hist, want.hist)
    assert_same(ts.asarray(a).histogram(3).hist, torch.from_numpy(a).histogram(3).hist)
    same_as_torch(lambda m: m.histogram(m.tensor([1, 2])))
    same_as_torch(lambda m: m.histogram(m.tensor([1.0, 2.0]), 3, range=(2.0, 1.0)))
    with pytest.raises(NotImplementedError, match="histogram: input tensor and bins tensors"):
        ts.histogram(ts.asarray([1, 2]))


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("r", [0, 1, 2, 3, 6])
@pytest.mark.parametrize("rep", [False, True])
def test_combinations_match_torch(n, r, rep):
    a = np.arange(n, dtype=np.float32) * 1.5
    want = torch.combinations(torch.from_numpy(a), r, rep)
    got = ts.combinations(ts.asarray(a), r=r, with_replacement=rep)
    assert_same(got, want)
    fn = itertools.combinations_with_replacement if rep else itertools.combinations
    if r:
        assert got.shape[0] == len(list(fn(range(n), r)))


def test_combinations_gradient_and_errors():
    compare_grads(lambda x: ts.combinations(x, 2) ** 2, lambda x: torch.combinations(x, 2) ** 2,
                  [np.array([1.0, -2.0, 3.0, 0.5])])
    same_as_torch(lambda m: m.combinations(m.ones((2, 2))))
    same_as_torch(lambda m: m.combinations(m.ones(3), -1))
    with pytest.raises(RuntimeError, match="overflows int64"):
        ts.combinations(ts.ones(1000), 60)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_gradient_matches_torch(data):
    edge = data.draw(st.sampled_from([1, 2]))
    a = data.draw(arrays("float64", shapes(1, 3, edge + 1, 5)))
    a = strided_views(data.draw, a)
    dims = data.draw(st.sampled_from([None, 0, [-1], "all"]))
    dims = list(range(a.ndim)) if dims == "all" else dims
    nd = a.ndim if dims is None else (1 if isinstance(dims, int) else len(dims))
    form = data.draw(st.sampled_from(["default", "scalar", "list", "coords"]))
    ta = torch.from_numpy(a.copy())
    kw_t: dict = {} if dims is None else {"dim": dims}
    kw_s = dict(kw_t)
    if form == "scalar":
        kw_t["spacing"] = kw_s["spacing"] = 0.5
    elif form == "list":
        kw_t["spacing"] = kw_s["spacing"] = [float(i + 1) for i in range(nd)]
    elif form == "coords":
        ds = list(range(a.ndim)) if dims is None else ([dims] if isinstance(dims, int) else dims)
        cs = [np.cumsum(np.linspace(0.5, 1.5, a.shape[d])) for d in ds]
        kw_t["spacing"] = [torch.from_numpy(c) for c in cs]
        kw_s["spacing"] = [ts.asarray(c) for c in cs]
    want = torch.gradient(ta, edge_order=edge, **kw_t)
    got = ts.gradient(ts.asarray(a), edge_order=edge, **kw_s)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w, rtol=1e-9, atol=1e-9)


def test_gradient_integer_gradients_and_errors():
    assert_same(ts.gradient(ts.asarray([1, 4, 9, 16]))[0],
                torch.gradient(torch.tensor([1, 4, 9, 16]))[0])
    compare_grads(lambda x: ts.gradient(x, spacing=2.0, edge_order=2)[1],
                  lambda x: torch.gradient(x, spacing=2.0, edge_order=2)[1],
                  [np.random.default_rng(4).standard_normal((3, 4))])
    compare_grads(lambda x, c: ts.gradient(x, spacing=[c], dim=0)[0],
                  lambda x, c: torch.gradient(x, spacing=[c], dim=0)[0],
                  [np.array([1.0, 3.0, 2.0, 5.0]), np.array([0.0, 1.0, 2.5, 3.0])])
    same_as_torch(lambda m: m.gradient(m.ones(3), edge_order=3))
    same_as_torch(lambda m: m.gradient(m.ones(2), edge_order=2))
    same_as_torch(lambda m: m.gradient(m.ones((3, 3)), spacing=[1.0, 2.0, 3.0]))
