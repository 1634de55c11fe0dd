"""F.gumbel_softmax is the C++ op itself (csrc/ops/nn/gumbel_softmax.h, bound in
csrc/python/bind_gumbel_softmax.cpp): the noise is ts.random.uniform's stream, the values the
formula's, the hard form straight-through, gradients checked in float64."""
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


def test_is_the_binding() -> None:
    assert F.gumbel_softmax is _C.gumbel_softmax
    assert list(inspect.signature(F.gumbel_softmax).parameters) == \
        list(inspect.signature(TF.gumbel_softmax).parameters)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.booleans(),
       st.sampled_from(["float32", "float64"]), st.floats(0.2, 3.0), st.data())
def test_values_are_the_formula_over_the_uniform_stream(shape, hard: bool, dtype: str,
                                                        tau: float, data) -> None:
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    logits = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    ts.manual_seed(7)
    u = ts.random.uniform(0.0, 1.0, tuple(shape), dtype=getattr(ts, dtype)).numpy()
    ts.manual_seed(7)
    got = F.gumbel_softmax(ts.asarray(logits), tau=tau, hard=hard, dim=dim).numpy()
    soft = TF.softmax((torch.tensor(logits) - torch.log(-torch.log1p(-torch.tensor(u)))) / tau,
                      dim)
    if hard:
        want = TF.one_hot(soft.argmax(dim), shape[dim]).movedim(-1, dim).to(soft.dtype)
        np.testing.assert_array_equal(got, want.numpy())
    else:
        tol = 1e-12 if dtype == "float64" else 1e-5
        np.testing.assert_allclose(got, soft.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("hard", [False, True])
def test_gradient_is_the_soft_samples(hard: bool) -> None:
    x = ts.asarray(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)

    def f(v):
        ts.manual_seed(11)
        return F.gumbel_softmax(v, tau=0.8, hard=hard)
    if not hard:
        assert ts.autograd.gradcheck(f, (x,))
    w = ts.asarray(np.random.default_rng(3).standard_normal((3, 4)))
    (f(x) * w).sum().backward()
    g_hard = x.grad.numpy().copy()
    x.grad = None
    ts.manual_seed(11)
    (F.gumbel_softmax(x, tau=0.8) * w).sum().backward()
    np.testing.assert_allclose(g_hard, x.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_errors_name_the_op() -> None:
    with pytest.raises(TypeError, match="gumbel_softmax: expected floating logits, got int64"):
        F.gumbel_softmax(ts.asarray(np.array([1, 2])))
    with pytest.raises(IndexError, match="gumbel_softmax|softmax"):
        F.gumbel_softmax(ts.zeros((2, 3)), dim=2)
