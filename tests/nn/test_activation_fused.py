"""The fused activation kernels (csrc/ops/nn/activation_fused.cpp, Note [Fused activations])
against PyTorch: values and gradients at the kinks and special values, over shapes, dtypes and
strided inputs, second derivatives, and the 16-bit dtypes."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import given, settings, strategies as st

import tessera as ts
from tessera.nn import functional as F

from harness import arrays, shapes, strided_views

CASES = [("sigmoid", {}), ("silu", {}), ("mish", {}), ("hardswish", {}), ("hardsigmoid", {}),
         ("elu", {}), ("elu", {"alpha": 0.5}), ("celu", {"alpha": 2.0}), ("selu", {}),
         ("leaky_relu", {"negative_slope": 0.2}), ("hardtanh", {}),
         ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("relu6", {}), ("softplus", {}),
         ("softplus", {"beta": 2.0, "threshold": 5.0})]
SPECIAL = [-np.inf, -100.0, -20.0, -3.0, -2.9, -1.0, -1e-30, 0.0, 1e-30, 0.5, 2.99, 3.0, 6.0,
           20.0, 25.0, 100.0, np.inf, np.nan]


def _pair(name):
    return getattr(F, name), getattr(TF, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", CASES)
def test_special_values_and_gradients(name, kw, dtype) -> None:
    f, g = _pair(name)
    x = ts.tensor(SPECIAL, dtype=getattr(ts, dtype), requires_grad=True)
    q = torch.tensor(SPECIAL, dtype=getattr(torch, dtype), requires_grad=True)
    y, w = f(x, **kw), g(q, **kw)
    y.backward(ts.ones_like(y))
    w.backward(torch.ones_like(w))
    rtol = 1e-6 if dtype == "float32" else 1e-7  # (torch: hardsigmoid's 1/6 is a float constant)
    np.testing.assert_allclose(y.detach().numpy(), w.detach().numpy(), rtol=rtol, atol=1e-30)
    np.testing.assert_allclose(x.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=1e-30)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), case=st.sampled_from(CASES), dtype=st.sampled_from(["float32", "float64"]))
def test_values_and_gradients_hypothesis(data, case, dtype) -> None:
    name, kw = case
    f, g = _pair(name)
    a = data.draw(arrays(dtype, shapes(0, 3, 0, 5),
                         elements=st.floats(-8, 8, width=32 if dtype == "float32" else 64)))
    if data.draw(st.booleans()):
        a = strided_views(data.draw, a)
    x = ts.asarray(a).requires_grad_(True)
    q = torch.tensor(np.array(a, order="C"), requires_grad=True)
    gr = np.asarray(np.random.default_rng(0).standard_normal(a.shape), dtype=dtype)
    y, w = f(x, **kw), g(q, **kw)
    y.backward(ts.asarray(gr))
    w.backward(torch.tensor(gr))
    tol = 2e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(y.detach().numpy(), w.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), q.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] != "hardsigmoid"])
def test_second_derivative_matches_torch(name, kw) -> None:
    f, g = _pair(name)
    pts = [-2.5, -0.5, 0.3, 1.7, 4.5]
    x = ts.tensor(pts, dtype=ts.float64, requires_grad=True)
    q = torch.tensor(pts, dtype=torch.float64, requires_grad=True)
    gx, = ts.autograd.grad(f(x, **kw).sum(), x, create_graph=True)
    gq, = torch.autograd.grad(g(q, **kw).sum(), q, create_graph=True)
    want = torch.autograd.grad(gq.sum(), q)[0].numpy() if gq.requires_grad else np.zeros(5)
    got = ts.autograd.grad(gx.sum(), x)[0].numpy() if gx.requires_grad else np.zeros(5)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kw", CASES)
def test_gradcheck_float64(name, kw) -> None:
    f, _ = _pair(name)
    # away from the kinks, where finite differences are smooth
    x = ts.tensor([-2.2, -0.7, 0.4, 1.3, 2.6], dtype=ts.float64, requires_grad=True)
    assert ts.autograd.gradcheck(lambda t: f(t, **kw), (x,))
    assert ts.autograd.gradgradcheck(lambda t: f(t, **kw), (x,))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kw", CASES)
def test_16_bit_dtypes_keep_dtype(name, kw, dtype) -> None:
    f, g = _pair(name)
    a = np.random.default_rng(1).standard_normal(300).astype(np.float32) * 4
    x = ts.asarray(a).astype(getattr(ts, dtype))
    q = torch.tensor(a).to(getattr(torch, dtype))
    y = f(x, **kw)
    assert y.dtype == getattr(ts, dtype)
    np.testing.assert_allclose(y.astype(ts.float32).numpy(), g(q, **kw).float().numpy(),
                               rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] not in ("sigmoid", "softplus")])
def test_inplace_forms(name, kw) -> None:
    f, g = _pair(name)
    a = np.linspace(-5, 5, 23)
    x, q = ts.asarray(a.copy()), torch.tensor(a.copy())
    r = f(x, inplace=True, **kw)
    g(q, inplace=True, **kw)
    assert r is x
    np.testing.assert_allclose(x.numpy(), q.numpy(), rtol=1e-12)


def test_node_names_and_integer_inputs() -> None:
    x = ts.ones(3, requires_grad=True)
    assert F.silu(x).grad_fn.name() == "SiluBackward0"
    assert F.selu(x).grad_fn.name() == "EluBackward0"
    assert ts.sigmoid(x).grad_fn.name() == "SigmoidBackward0"
    # integer inputs keep the composite forms' results (torch's)
    i = ts.tensor([-4, -1, 0, 2, 5])
    np.testing.assert_allclose(ts.sigmoid(i).numpy(), torch.sigmoid(torch.tensor([-4, -1, 0, 2, 5])).numpy(),
                               rtol=1e-6)
