"""The samplers bound in C++ (csrc/python/bind_random_samplers.cpp): ts.normal / bernoulli /
multinomial / poisson / binomial in PyTorch's and NumPy's forms, ts.random's exponential /
permutation / shuffle / choice, and Tensor's in-place fills. Statistics (moments within a few
standard errors), reproducibility under ts.manual_seed and generator=, shapes/dtypes/out= against
torch (hypothesis over shapes, empty and 0-d included), PyTorch's gradients, and errors (class and
message naming the op)."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import tessera as ts
from harness import shapes

N = 100_000


def meta(t):
    return tuple(t.shape), str(t.dtype).rsplit(".", 1)[-1]


def gen(seed=0):
    return ts.random.Generator(seed)


# ---- forms against torch
@settings(max_examples=40, deadline=None)
@given(shapes(max_dims=3), st.sampled_from(["float32", "float64"]),
       st.sampled_from(["tt", "tf", "ft"]))
def test_normal_tensor_forms_as_torch(shape, dtype, form):
    def call(m):
        t = m.zeros(shape, dtype=getattr(m, dtype))
        o = m.ones(shape, dtype=getattr(m, dtype))
        return {"tt": lambda: m.normal(t, o), "tf": lambda: m.normal(t, 2.0),
                "ft": lambda: m.normal(1.0, o)}[form]()
    assert meta(call(ts)) == meta(call(torch))


@settings(max_examples=30, deadline=None)
@given(shapes(max_dims=3), st.sampled_from([None, "float32", "float64"]))
def test_normal_size_form_as_torch(shape, dtype):
    kw = {} if dtype is None else {"dtype": dtype}
    got = ts.normal(0.0, 1.0, shape, **{k: getattr(ts, v) for k, v in kw.items()})
    want = torch.normal(0.0, 1.0, shape, **{k: getattr(torch, v) for k, v in kw.items()})
    assert meta(got) == meta(want)
    assert meta(ts.normal(0.0, 1.0, size=shape)) == meta(torch.normal(0.0, 1.0, size=shape))


@settings(max_examples=30, deadline=None)
@given(shapes(max_dims=3), st.sampled_from(["float16", "float32", "float64"]))
def test_bernoulli_forms_as_torch(shape, dtype):
    for m in (ts, torch):
        p = m.full(shape, 0.5, dtype=getattr(m, dtype))
        if m is ts:
            got = (ts.bernoulli(p), ts.bernoulli(p, 0.3), p.bernoulli(), p.bernoulli(0.3))
        else:
            want = (torch.bernoulli(p), torch.bernoulli(p, 0.3), p.bernoulli(), p.bernoulli(0.3))
    for a, b in zip(got, want):
        assert meta(a) == meta(b)


def test_normal_broadcasts_and_mean_dtype_wins():
    """torch.normal(Tensor, Tensor) broadcasts and takes mean's dtype (the Python version took
    the promoted dtype: float64 here)."""
    m, s = ts.zeros(3), ts.ones((2, 1), dtype=ts.float64)
    want = torch.normal(torch.zeros(3), torch.ones((2, 1), dtype=torch.float64))
    assert meta(ts.normal(m, s)) == meta(want) == ((2, 3), "float32")
    assert meta(ts.normal(0.0, ts.ones(4, dtype=ts.float64))) == ((4,), "float64")
    # NumPy's size= broadcasts with tensor parameters too
    assert ts.normal(ts.zeros(2), 1.0, size=(5, 2)).shape == (5, 2)


def test_out_forms():
    o = ts.empty(7)
    assert ts.normal(0.0, 1.0, (2, 3), out=o) is o and o.shape == (2, 3)
    o = ts.empty(0)
    assert ts.normal(ts.zeros(4), 1.0, out=o) is o and o.shape == (4,)
    o = ts.empty(3, dtype=ts.int64)
    r = ts.bernoulli(ts.full((3,), 1.0), out=o)
    assert r is o and o.tolist() == [1, 1, 1]
    o = ts.empty(0, dtype=ts.int64)
    assert ts.multinomial(ts.ones(3), 2, out=o) is o and o.shape == (2,)
    x = ts.normal(0.0, 1.0, (3,), requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_method_is_the_function_and_signatures():
    assert ts.Tensor.bernoulli is ts.bernoulli and ts.Tensor.multinomial is ts.multinomial
    assert ts.random.normal is ts.normal and ts.random.bernoulli is ts.bernoulli
    params = list(inspect.signature(ts.normal).parameters)
    assert params[:3] == ["mean", "std", "size"] and "generator" in params and "out" in params
    assert list(inspect.signature(ts.poisson).parameters) == ["input", "generator"]
    assert "[from, to)" in ts.Tensor.random_.__doc__


# ---- reproducibility
@pytest.mark.parametrize("draw", [
    lambda g: ts.normal(ts.zeros(50), ts.ones(50), generator=g),
    lambda g: ts.normal(0.0, 2.0, (50,), generator=g),
    lambda g: ts.bernoulli(ts.full((50,), 0.4), generator=g),
    lambda g: ts.multinomial(ts.ones(10), 5, generator=g),
    lambda g: ts.poisson(ts.full((50,), 30.0), generator=g),
    lambda g: ts.binomial(ts.full((50,), 40.0), ts.full((50,), 0.3), generator=g),
    lambda g: ts.random.exponential(size=50, generator=g),
    lambda g: ts.random.choice(10, 20, generator=g),
    lambda g: ts.zeros(50).random_(0, 100, generator=g),
    lambda g: ts.zeros(50).geometric_(0.3, generator=g),
    lambda g: ts.zeros(50).cauchy_(generator=g),
    lambda g: ts.zeros(50).log_normal_(generator=g),
    lambda g: ts.zeros(50).exponential_(generator=g),
    lambda g: ts.zeros(50).bernoulli_(0.5, generator=g),
])
def test_seeded_and_generator_reproducible(draw):
    a, b = draw(gen(3)).tolist(), draw(gen(3)).tolist()
    assert a == b and a != draw(gen(4)).tolist()
    ts.manual_seed(11)
    c = draw(None).tolist()
    ts.manual_seed(11)
    assert draw(None).tolist() == c


def test_streams_unchanged_from_the_python_definitions():
    """The C++ normal/bernoulli draw randn's/rand's numbers as the Python versions did."""
    m, s = ts.asarray([0.0, 100.0]), ts.asarray([1.0, 2.0])
    got = ts.normal(m, s, size=(5, 2), generator=gen(4))
    want = m + s * gen(4).randn((5, 2))
    assert got.tolist() == want.tolist()
    assert ts.normal(1.0, 3.0, (6,), generator=gen(2)).tolist() == \
        ts.empty(6).normal_(1.0, 3.0, generator=gen(2)).tolist()  # the one fill, as before
    p = ts.asarray([0.1, 0.5, 0.9] * 10)
    assert ts.bernoulli(p, generator=gen(5)).tolist() == \
        (gen(5).rand(30) < p).astype(ts.float32).tolist()
    assert ts.random.bernoulli(0.3, 20, generator=gen(6)).tolist() == \
        (gen(6).rand(20, dtype=ts.float64) < 0.3).astype(ts.float32).tolist()


# ---- statistics
@pytest.mark.parametrize("rate", [0.0, 0.5, 3.0, 9.9, 10.0, 47.5, 1000.0])
def test_poisson_moments(rate):
    x = ts.poisson(ts.full((N,), rate, dtype=ts.float64), generator=gen(1)).numpy()
    assert (x >= 0).all() and (x == np.round(x)).all()
    se = math.sqrt(max(rate, 1e-12) / N)
    assert abs(x.mean() - rate) < 6 * se + 1e-12
    assert abs(x.var() - rate) < 6 * math.sqrt((rate + 2 * rate ** 2) / N) + 1e-12


@pytest.mark.parametrize("n,p", [(10, 0.3), (5, 0.0), (7, 1.0), (100, 0.5), (1000, 0.02),
                                 (1000, 0.9), (40, 0.75)])
def test_binomial_moments(n, p):
    x = ts.binomial(ts.full((N,), float(n)), ts.full((N,), p), generator=gen(2)).numpy()
    assert x.dtype == np.float32 and (x >= 0).all() and (x <= n).all()
    var = n * p * (1 - p)
    assert abs(x.mean() - n * p) < 6 * math.sqrt(var / N) + 1e-9
    if var > 0:
        assert abs(x.var() / var - 1) < 0.05


def test_normal_tensor_moments():
    y = ts.normal(ts.asarray([0.0, 10.0]), ts.asarray([1.0, 3.0]), size=(N, 2),
                  generator=gen(7)).numpy()
    assert abs(y[:, 0].mean()) < 0.03 and abs(y[:, 1].mean() - 10) < 0.06
    assert abs(y[:, 0].std() - 1) < 0.02 and abs(y[:, 1].std() - 3) < 0.05


def test_bernoulli_keep_rates():
    for p in (0.0, 0.2, 0.5, 1.0):
        x = ts.bernoulli(ts.full((N,), p), generator=gen(8)).numpy()
        assert set(np.unique(x)) <= {0.0, 1.0}
        assert abs(x.mean() - p) < 6 * math.sqrt(p * (1 - p) / N) + 1e-12
    x = ts.zeros((N // 10, 10)).bernoulli_(ts.linspace(0, 1, 10), generator=gen(9)).numpy()
    assert np.abs(x.mean(0) - np.linspace(0, 1, 10)).max() < 0.03


def test_inplace_fill_ranges_and_moments():
    x = ts.zeros(N, dtype=ts.float64)
    assert x.uniform_(-2, 3) is x and x.min().item() >= -2 and x.max().item() < 3
    assert abs(x.normal_(4.0, 0.5).mean().item() - 4) < 0.01
    i = ts.zeros(N, dtype=ts.uint8).random_()
    assert i.min().item() == 0 and i.max().item() == 255
    b = ts.zeros(1000, dtype=ts.bool).random_()
    assert 0 < b.sum().item() < 1000
    big = ts.zeros(1000, dtype=ts.int64).random_()  # [0, 2**63 - 1] (raised before)
    assert big.min().item() >= 0 and big.max().item() > 2 ** 60
    f = ts.zeros(N).random_()
    assert f.min().item() >= 0 and f.max().item() <= 2 ** 24
    assert ts.zeros(100).random_(to=4).max().item() <= 3
    g = ts.zeros(N, dtype=ts.int64).geometric_(0.25)
    assert g.min().item() >= 1 and abs(g.double().mean().item() - 4) < 0.1
    e = ts.zeros(N).exponential_(4.0)
    assert e.min().item() >= 0 and abs(e.mean().item() - 0.25) < 0.01


# ---- gradients (derivatives.yaml)
def test_gradients_as_torch():
    for m in (ts, torch):
        mean = m.zeros(3, requires_grad=True)
        std = m.ones(3, requires_grad=True)
        m.normal(mean, std).sum().backward()
        assert mean.grad.tolist() == std.grad.tolist() == [0.0] * 3
        p = m.full((3,), 0.5, requires_grad=True)
        m.bernoulli(p).sum().backward()
        assert p.grad.tolist() == [0.0] * 3
        r = m.full((3,), 2.0, requires_grad=True)
        y = m.poisson(r)
        assert y.requires_grad
        y.sum().backward()
        assert r.grad.tolist() == [0.0] * 3
    assert "Normal" in type(ts.normal(ts.zeros(2, requires_grad=True), 1.0).grad_fn).__name__ \
        or "Normal" in ts.normal(ts.zeros(2, requires_grad=True), 1.0).grad_fn.name()
    c = ts.full((3,), 5.0, requires_grad=True)
    y = ts.binomial(c, ts.full((3,), 0.5))
    assert y.requires_grad
    with pytest.raises((NotImplementedError, RuntimeError), match="Binomial"):
        y.sum().backward()


# ---- errors (class and message)
@pytest.mark.parametrize("call,cls,match", [
    (lambda m: m.normal(m.zeros(3), -1.0), RuntimeError, "normal"),
    (lambda m: m.normal(m.zeros(3), -m.ones(3)), RuntimeError, "normal"),
    (lambda m: m.normal(m.zeros(3), m.ones(4)), RuntimeError, ""),
    (lambda m: m.bernoulli(m.full((3,), 1.5)), RuntimeError, ""),
    (lambda m: m.bernoulli(m.zeros(3), 1.5), RuntimeError, "bernoulli"),
    (lambda m: m.poisson(m.asarray([-1.0]) if m is ts else m.tensor([-1.0])), RuntimeError,
     "Poisson rate"),
    (lambda m: m.poisson(3), TypeError, "must be"),
    (lambda m: m.binomial(m.ones(3, dtype=m.int64), m.ones(3) / 2), ValueError, "count"),
    (lambda m: m.multinomial(m.ones(2, 2, 2), 1), RuntimeError, ""),
    (lambda m: m.multinomial(m.ones(3), 0), RuntimeError, ""),
    (lambda m: m.multinomial(m.ones(3, dtype=m.int64), 1), RuntimeError, ""),
    (lambda m: m.zeros(3).random_(5, 2), RuntimeError, "random_"),
    (lambda m: m.zeros(3).random_(0), RuntimeError, "random_"),
    (lambda m: m.zeros(3, dtype=m.uint8).random_(0, 300), RuntimeError, "out of bounds"),
    (lambda m: m.zeros(3, dtype=m.uint8).random_(-1, 3), RuntimeError, "out of bounds"),
    (lambda m: m.zeros(3).geometric_(1.0), RuntimeError, "geometric_"),
    (lambda m: m.zeros(3).geometric_(0.0), RuntimeError, "geometric_"),
    (lambda m: m.zeros(3).exponential_(0), RuntimeError, "exponential_"),
    (lambda m: m.zeros(3, dtype=m.int64).exponential_(), RuntimeError, ""),
    (lambda m: m.zeros(3).cauchy_(0, -1), RuntimeError, "cauchy_"),
    (lambda m: m.zeros(3).log_normal_(0, 0), RuntimeError, "log_normal_"),
    (lambda m: m.zeros(3).uniform_(2, 1), RuntimeError, ""),
    (lambda m: m.zeros(3, requires_grad=True).normal_(), RuntimeError, ""),
    (lambda m: m.zeros(3, requires_grad=True).uniform_(), RuntimeError, ""),
    (lambda m: m.zeros(3, requires_grad=True).random_(), RuntimeError, ""),
], ids=range(25))
def test_errors_as_torch(call, cls, match):
    with pytest.raises(cls, match=match):
        call(torch)
    with pytest.raises(cls, match=match) as e:
        call(ts)
    first = str(e.value).split(":")[0].split("(")[0]
    assert first in ("normal", "bernoulli", "poisson", "binomial", "multinomial", "random_",
                     "geometric_", "exponential_", "cauchy_", "log_normal_", "uniform",
                     "uniform_", "normal_", "broadcast_shapes") or "leaf" in str(e.value), e.value


def test_random_module_errors():
    with pytest.raises(TypeError, match="shuffle"):
        ts.random.shuffle([1, 2])
    with pytest.raises(ValueError, match="permutation"):
        ts.random.permutation(ts.asarray(1.0))
    with pytest.raises(ValueError, match="exponential"):
        ts.random.exponential(lambd=0.0, size=3)
    with pytest.raises(ValueError, match="choice"):
        ts.random.choice(ts.zeros((2, 2)))
    with pytest.raises(TypeError, match="generator"):
        ts.normal(0.0, 1.0, (2,), generator=5)


FILLS = {
    "uniform_": ((-1.0, 2.0), ["float16", "float32", "float64"]),
    "normal_": ((1.0, 0.5), ["float16", "float32", "float64"]),
    "bernoulli_": ((0.3,), ["bool", "uint8", "int64", "float32", "float64"]),
    "random_": ((0, 7), ["bool", "uint8", "int32", "int64", "float32", "float64"]),
    "exponential_": ((2.0,), ["float32", "float64"]),
    "geometric_": ((0.4,), ["int16", "int64", "float32"]),
    "cauchy_": ((0.0, 1.0), ["float32", "float64"]),
    "log_normal_": ((0.0, 0.5), ["float32", "float64"]),
}


@settings(max_examples=60, deadline=None)
@given(shapes(max_dims=3), st.sampled_from(sorted(FILLS)), st.data())
def test_inplace_fills_keep_shape_and_dtype_as_torch(shape, name, data):
    args, dtypes = FILLS[name]
    if name == "random_" and data.draw(st.booleans()):
        args = (2,)
    dtype = data.draw(st.sampled_from(dtypes))
    if name == "random_" and dtype == "bool":
        args = (0, 2)
    x = ts.zeros(shape, dtype=getattr(ts, dtype))
    y = torch.zeros(shape, dtype=getattr(torch, dtype))
    assert getattr(x, name)(*args) is x
    getattr(y, name)(*args)
    assert meta(x) == meta(y)
    if name == "random_" and x.numel():
        lo, hi = (0, args[0]) if len(args) == 1 else args
        v = x.to(ts.int64).numpy()
        assert v.min() >= lo and v.max() < hi


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.booleans(), st.booleans(), st.integers(1, 6))
def test_multinomial_shapes_as_torch(rows, n, two_d, replacement, k):
    k = k if replacement else min(k, n)
    shape = (rows, n) if two_d else (n,)
    got = ts.multinomial(ts.ones(shape), k, replacement)
    want = torch.multinomial(torch.ones(shape), k, replacement)
    assert meta(got) == meta(want)
    v = got.numpy()
    assert v.min() >= 0 and v.max() < n
    if not replacement:
        for row in v.reshape(-1, k):
            assert len(set(row.tolist())) == k


@pytest.mark.parametrize("fill", ["normal_()", "uniform_()", "bernoulli_(0.5)", "exponential_()",
                                  "cauchy_()", "log_normal_()", "geometric_(0.5)",
                                  "random_(0, 5)", "bernoulli_(m.full((3,), 0.5))"])
def test_inplace_fill_of_a_graph_tensor_has_zero_gradient(fill):
    """x.normal_() & co. on a non-leaf give it a node whose gradient is zero (derivatives.yaml;
    the Python versions left the old history in place, so the gradient flowed through); a view
    of a leaf that requires grad raises, as torch."""
    grads = []
    for m in (torch, ts):
        a = m.ones(3, requires_grad=True)
        y = a * 2
        eval("y." + fill, {"y": y, "m": m})
        (y * 3).sum().backward()
        grads.append(a.grad.tolist())
        leaf = m.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            eval("leaf[:2]." + fill, {"leaf": leaf, "m": m})
    assert grads[0] == grads[1] == [0.0] * 3


def test_multinomial_takes_zero_weights_last_as_torch():
    """Without replacement, once the positive weights are drawn the zero-weight categories
    follow (PyTorch; the C++ op refused before). Their order is the implementation's: tessera
    takes index order, torch its top-k's."""
    w = [[0.0, 3.0, 0.0, 1.0], [0.0, 0.0, 5.0, 0.0]]
    got = ts.multinomial(ts.asarray(w), 4, generator=gen(1)).tolist()
    want = torch.multinomial(torch.tensor(w), 4).tolist()
    for g_row, w_row in zip(got + want, w + w):
        positive = sorted(i for i, v in enumerate(w_row) if v > 0)
        assert sorted(g_row[:len(positive)]) == positive
        assert sorted(g_row[len(positive):]) == [i for i, v in enumerate(w_row) if v == 0]
    with pytest.raises(RuntimeError, match="multinomial"):
        ts.multinomial(ts.asarray(w), 5)
