"""F.pdist and F.one_hot are the C++ ops themselves (csrc/ops/nn/distance.h, bound in
csrc/python/bind_distance.cpp; ts.pdist is the same object): values and gradients against
torch's (hypothesis over shapes, p, dtypes, layouts, empty inputs), float64 gradcheck, and
errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera import _C
from tessera.nn import functional as F
from harness import strided_views


def test_is_the_binding() -> None:
    assert F.pdist is _C.pdist is ts.pdist and F.one_hot is _C.one_hot
    assert list(inspect.signature(F.pdist).parameters) == ["input", "p"]
    assert list(inspect.signature(F.one_hot).parameters) == ["input", "num_classes"]


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(0, 5), st.integers(0, 4),
       st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]),
       st.sampled_from(["float32", "float64"]))
def test_pdist_matches_torch(data, n: int, m: int, p: float, dtype: str) -> None:
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    x = rng.standard_normal((n, m)).astype(dtype)
    if n > 1 and data.draw(st.booleans()):
        x[1] = x[0]  # a zero distance: zero gradient in both
    x = strided_views(data.draw, x)
    xs = ts.asarray(x, requires_grad=True)
    xt = torch.tensor(np.ascontiguousarray(x), requires_grad=True)
    y, yt = F.pdist(xs, p), TF.pdist(xt, p)
    tol = 1e-10 if dtype == "float64" else 1e-4
    assert y.dtype.name == dtype and tuple(y.shape) == tuple(yt.shape)
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=tol, atol=tol)
    if yt.numel() == 0:
        return
    cot = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    (y * ts.asarray(cot)).sum().backward()
    (yt * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
def test_pdist_gradcheck(p: float) -> None:
    x = ts.asarray(np.random.default_rng(2).standard_normal((4, 3)), requires_grad=True)
    assert ts.autograd.gradcheck(lambda v: F.pdist(v, p), (x,))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=8), st.sampled_from([-1, 6, 9]),
       st.sampled_from(["int64", "int32", "uint8"]))
def test_one_hot_matches_torch(vals, num: int, dtype: str) -> None:
    a = np.array(vals, dtype=dtype).reshape(-1, 2) if len(vals) % 2 == 0 else np.array(vals,
                                                                                      dtype)
    if num < 0 and a.size == 0:
        return
    got = F.one_hot(ts.asarray(a), num)
    want = TF.one_hot(torch.tensor(a.astype("int64")), num)
    assert got.dtype.name == "int64"
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_errors_name_the_op_and_are_torch_class() -> None:
    cases = [
        (lambda lib: lib.nn.functional.pdist(lib.zeros(3), 2), ValueError,
         r"pdist: expected a 2-D input \(N, M\), got shape \(3,\)"),
        (lambda lib: lib.nn.functional.pdist(lib.zeros((3, 2)), -1.0), ValueError,
         "pdist: p must be non-negative"),
        (lambda lib: lib.nn.functional.pdist(lib.zeros((3, 2), dtype=lib.int64), 2), TypeError,
         "pdist: only supports floating-point dtypes, got int64"),
        (lambda lib: lib.nn.functional.one_hot(lib.tensor([5]), 3), ValueError,
         "one_hot: class values must be smaller than num_classes 3"),
        (lambda lib: lib.nn.functional.one_hot(lib.tensor([-1]), 3), ValueError,
         "one_hot: class values must be non-negative"),
        (lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.int64)), ValueError,
         "one_hot: cannot infer the number of classes"),
        (lambda lib: lib.nn.functional.one_hot(lib.tensor([1.0]), 3), TypeError,
         "one_hot: expected an integer tensor"),
    ]
    for f, cls, match in cases:
        with pytest.raises(cls, match=match) as e:
            f(ts)
        assert isinstance(e.value, RuntimeError)  # torch's class
        with pytest.raises(RuntimeError):
            f(torch)


def test_pdist_of_integers_is_a_type_error_as_torch() -> None:
    # the Python version computed integer distances; torch refuses non-floating input
    with pytest.raises(TypeError):
        ts.pdist(ts.asarray(np.arange(6).reshape(3, 2)))
