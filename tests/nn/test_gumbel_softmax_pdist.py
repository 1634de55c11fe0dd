"""F.gumbel_softmax (statistics, hard straight-through gradients) and F.pdist vs PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as TF

from tessera import nn
from tessera.testing import gradcheck
from harness import close, compare_fn, tt

F = nn.functional
rng = np.random.default_rng(0)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, 0.0, float("inf")])
def test_pdist_matches_torch(p: float) -> None:
    x = rng.standard_normal((5, 4)).astype(np.float32)
    x[3] = x[1]  # a zero distance: zero gradient, no NaN
    compare_fn(lambda v: F.pdist(v, p), lambda v: TF.pdist(v, p), x, rtol=1e-5, atol=1e-5)


def test_pdist_gradcheck_and_errors() -> None:
    x = tt(rng.standard_normal((4, 3)), requires_grad=True)
    assert gradcheck(lambda v: F.pdist(v, 3.0), (x,))
    assert F.pdist(tt(np.zeros((1, 3), np.float32))).shape == (0,)
    with pytest.raises(ValueError, match=r"pdist: expected a 2-D input \(N, M\), got shape \(3,\)"):
        F.pdist(tt(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="p must be non-negative"):
        F.pdist(tt(np.zeros((2, 3), np.float32)), -1.0)


@pytest.mark.parametrize("dim", [-1, 0])
def test_gumbel_softmax(dim: int) -> None:
    logits = np.log(np.array([0.1, 0.2, 0.7], np.float32))
    big = np.tile(logits, (20000, 1)) if dim == -1 else np.tile(logits[:, None], (1, 20000))
    soft = F.gumbel_softmax(tt(big), tau=0.5, dim=dim).numpy()
    np.testing.assert_allclose(soft.sum(axis=dim), 1.0, rtol=1e-5)
    lx = tt(big, requires_grad=True)
    hard = F.gumbel_softmax(lx, tau=0.5, hard=True, dim=dim)
    h = hard.numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(axis=dim) == 1)
    freq = h.mean(axis=1 - (dim % 2)) if dim == 0 else h.mean(axis=0)
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.02)  # Gumbel-max sampling
    # straight-through: the gradient is the soft sample's
    g = rng.standard_normal(big.shape).astype(np.float32)
    hard.backward(tt(g))
    assert np.isfinite(lx.grad.numpy()).all() and np.abs(lx.grad.numpy()).sum() > 0
    small = tt(np.array([[1.0, 2.0, 3.0]]), requires_grad=True)
    y = F.gumbel_softmax(small, tau=2.0)
    close(y.sum(axis=-1), np.ones(1), 1e-6, 1e-6)
