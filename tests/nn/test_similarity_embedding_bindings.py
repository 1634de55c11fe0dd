"""F.cosine_similarity is the C++ op itself (csrc/ops/nn/similarity.h, bound in
csrc/python/bind_similarity.cpp): values and gradients against torch's, broadcasting, zero
vectors, dtypes, and errors naming the op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tessera as ts
from tessera import _C
from tessera.nn import functional as F

RNG = np.random.default_rng(17)


def _pair(a: np.ndarray, b: np.ndarray, dtype: str):
    xs = [ts.tensor(a.astype(dtype), requires_grad=True), ts.tensor(b.astype(dtype),
                                                                   requires_grad=True)]
    ys = [torch.tensor(a.astype(dtype), requires_grad=True),
          torch.tensor(b.astype(dtype), requires_grad=True)]
    return xs, ys


def _check(a: np.ndarray, b: np.ndarray, dim: int, dtype: str, eps: float = 1e-8) -> None:
    (x1, x2), (y1, y2) = _pair(a, b, dtype)
    out = F.cosine_similarity(x1, x2, dim, eps)
    ref = TF.cosine_similarity(y1, y2, dim, eps)
    tol = 1e-12 if dtype == "float64" else 1e-5
    assert tuple(out.shape) == tuple(ref.shape)
    assert str(out.dtype).endswith(str(ref.dtype).split(".")[-1])
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=tol, atol=tol)
    w = RNG.standard_normal(tuple(ref.shape)).astype(dtype)
    (out * ts.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for x, y in ((x1, y1), (x2, y2)):
        assert np.all(np.isfinite(x.grad.numpy()))
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol, atol=tol)


def test_is_the_binding() -> None:
    assert F.cosine_similarity is _C.cosine_similarity
    params = list(inspect.signature(F.cosine_similarity).parameters.values())
    assert [(p.name, p.default) for p in params] == [
        ("x1", inspect.Parameter.empty), ("x2", inspect.Parameter.empty), ("dim", 1),
        ("eps", 1e-8)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("s1,s2,dim", [((4, 8), (4, 8), 1), ((4, 8), (4, 8), 0),
                                       ((4, 8), (4, 8), -1), ((3, 1, 5), (1, 4, 5), -1),
                                       ((3, 1, 5), (1, 4, 5), 1), ((5,), (2, 5), 0),
                                       ((2, 3, 4), (3, 1), 1), ((6,), (6,), 0)])
def test_values_and_gradients_match_torch(s1, s2, dim, dtype) -> None:
    _check(RNG.standard_normal(s1), RNG.standard_normal(s2), dim, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_zero_vectors_have_finite_gradients(dtype) -> None:
    a = np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [1e-9, 0.0, 0.0]])
    b = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [2.0, -1.0, 0.5]])
    _check(a, b, 1, dtype)
    _check(a, b, 1, dtype, eps=0.5)


def test_float64_gradcheck_and_second_order() -> None:
    x = ts.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    y = ts.tensor(RNG.standard_normal((1, 4)), requires_grad=True)
    assert ts.autograd.gradcheck(lambda u, v: F.cosine_similarity(u, v, dim=1), (x, y))
    assert ts.autograd.gradgradcheck(lambda u, v: F.cosine_similarity(u, v, dim=1), (x, y))


def test_integral_operand_promotes_and_both_integral_raise() -> None:
    a = np.arange(6).reshape(2, 3)
    b = RNG.standard_normal((2, 3)).astype("float32")
    out = F.cosine_similarity(ts.tensor(a), ts.tensor(b))
    ref = TF.cosine_similarity(torch.tensor(a), torch.tensor(b))
    assert out.dtype == ts.float32
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="cosine_similarity"):
        F.cosine_similarity(ts.tensor(a), ts.tensor(a))


def test_bad_dim_and_shapes_name_the_op() -> None:
    x = ts.ones((2, 3))
    with pytest.raises(IndexError, match="cosine_similarity"):
        F.cosine_similarity(x, x, dim=2)
    with pytest.raises(ValueError, match="cosine_similarity"):
        F.cosine_similarity(x, ts.ones((4, 3)))


def test_module_and_torch_alias() -> None:
    a, b = RNG.standard_normal((4, 8)), RNG.standard_normal((4, 8))
    ref = TF.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=0, eps=1e-3).numpy()
    out = ts.nn.CosineSimilarity(dim=0, eps=1e-3)(ts.tensor(a), ts.tensor(b))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    np.testing.assert_allclose(ts.cosine_similarity(ts.tensor(a), ts.tensor(b), 0, 1e-3).numpy(),
                               ref, rtol=1e-12)


# ------------------------------------------------------------------ embedding(scale_grad_by_freq)

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_scale_grad_by_freq_matches_torch(dtype, padding_idx) -> None:
    w = RNG.standard_normal((7, 4)).astype(dtype)
    idx = np.array([[0, 2, 2, 6], [2, 5, 1, 6], [3, 3, 3, 0]])
    g = RNG.standard_normal(idx.shape + (4,)).astype(dtype)
    sw = ts.tensor(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    out = F.embedding(ts.tensor(idx), sw, padding_idx, scale_grad_by_freq=True)
    ref = TF.embedding(torch.tensor(idx), tw, padding_idx, scale_grad_by_freq=True)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())  # exactly x
    out.backward(ts.tensor(g))
    ref.backward(torch.tensor(g))
    tol = 1e-12 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(sw.grad.numpy(), tw.grad.numpy(), rtol=tol, atol=tol)


def test_scale_grad_op_values_gradients_and_node() -> None:
    x = ts.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    s = ts.tensor([[0.5], [1.0], [0.25]])
    y = _C._scale_grad(x, s)
    np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
    assert y.grad_fn.name() == "ScaleGradBackward0"
    g = RNG.standard_normal((3, 2))
    (gx,) = ts.autograd.grad(y, x, ts.tensor(g), create_graph=True)
    np.testing.assert_allclose(gx.detach().numpy(), g * s.numpy(), rtol=1e-15)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to(s.numpy(), (3, 2)), rtol=1e-15)
    z = _C._scale_grad(ts.tensor([1.0, 2.0]), ts.tensor(0.5))
    assert not z.requires_grad and z.grad_fn is None
