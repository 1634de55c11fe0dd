"""nn.init's random fills: torch's algorithms on tessera ops (trunc_normal_ by inverse transform
sampling, orthogonal_ by QR of a normal matrix with the signs of R's diagonal), drawn from the
generator ts.manual_seed seeds or the one passed, on the tensor's device."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tessera as ts
from tessera import nn


def _norm_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def test_trunc_normal_statistics() -> None:
    ts.manual_seed(1)
    mean, std, a, b = 0.5, 2.0, -1.0, 3.0
    w = nn.init.trunc_normal_(ts.empty(400, 500), mean, std, a, b).numpy().astype(np.float64)
    assert w.min() >= a and w.max() <= b
    al, be = (a - mean) / std, (b - mean) / std
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    z = _norm_cdf(np.array(be)) - _norm_cdf(np.array(al))
    want_mean = mean + std * (phi(al) - phi(be)) / z
    want_var = std ** 2 * (1 + (al * phi(al) - be * phi(be)) / z - ((phi(al) - phi(be)) / z) ** 2)
    n = w.size
    assert abs(w.mean() - want_mean) < 5 * math.sqrt(want_var / n)
    assert abs(w.var() - want_var) < 0.01 * want_var
    # Kolmogorov-Smirnov against the truncated normal's cdf (a sample of 20,000)
    x = np.sort(w.ravel()[:20000])
    f = (_norm_cdf((x - mean) / std) - _norm_cdf(np.array(al))) / z
    k = np.arange(1, x.size + 1) / x.size
    assert max((k - f).max(), (f - (k - 1 / x.size)).max()) < 1.95 / math.sqrt(x.size) * 1.6


def test_trunc_normal_is_torchs_transform_of_one_uniform_draw() -> None:
    mean, std, a, b = 0.2, 0.7, -0.5, 1.0
    ts.manual_seed(7)
    w = nn.init.trunc_normal_(ts.empty(64, 32, dtype=ts.float64), mean, std, a, b)
    cdf = lambda x: (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0  # noqa: E731
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    ts.manual_seed(7)
    u = torch.from_numpy(ts.empty(64, 32, dtype=ts.float64).uniform_(2 * lo - 1, 2 * hi - 1).numpy())
    want = (u.erfinv() * (std * math.sqrt(2.0)) + mean).clamp(a, b)
    np.testing.assert_allclose(w.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 10), (10, 6), (8, 3, 2), (5, 5)])
def test_orthogonal_is_torchs_qr_of_one_normal_draw(shape) -> None:
    rows, cols = shape[0], math.prod(shape[1:])
    ts.manual_seed(3)
    w = nn.init.orthogonal_(ts.empty(*shape, dtype=ts.float64), gain=1.5).numpy().reshape(rows, cols)
    ts.manual_seed(3)
    wide = rows < cols
    g = torch.from_numpy(ts.empty(rows, cols, dtype=ts.float64).normal_().numpy())
    q, r = torch.linalg.qr(g.T if wide else g)
    q = (q * torch.diag(r).sign()).T if wide else q * torch.diag(r).sign()
    np.testing.assert_allclose(w, 1.5 * q.numpy(), atol=1e-10)
    small = min(rows, cols)
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 2.25 * np.eye(small), atol=1e-10)


def test_random_inits_reproduce_under_manual_seed_and_generator() -> None:
    fills = [lambda t, g=None: nn.init.trunc_normal_(t, generator=g),
             lambda t, g=None: nn.init.orthogonal_(t, generator=g),
             lambda t, g=None: nn.init.uniform_(t, -1, 1, generator=g),
             lambda t, g=None: nn.init.normal_(t, 0, 2, generator=g),
             lambda t, g=None: nn.init.sparse_(t, 0.5, generator=g)]
    for fill in fills:
        ts.manual_seed(11)
        a = fill(ts.empty(6, 4)).tolist()
        ts.manual_seed(11)
        assert fill(ts.empty(6, 4)).tolist() == a
        assert fill(ts.empty(6, 4)).tolist() != a
        b = fill(ts.empty(6, 4), ts.Generator().manual_seed(5)).tolist()
        assert fill(ts.empty(6, 4), ts.Generator().manual_seed(5)).tolist() == b


def test_orthogonal_and_trunc_normal_keep_dtype_and_grad_state() -> None:
    p = nn.Parameter(ts.empty(4, 6))
    nn.init.orthogonal_(p)
    nn.init.trunc_normal_(p)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    h = nn.init.orthogonal_(ts.empty(4, 4, dtype=ts.float16))
    assert h.dtype == ts.float16
    np.testing.assert_allclose(h.numpy().astype(np.float64) @ h.numpy().T, np.eye(4), atol=5e-3)
    assert nn.init.orthogonal_(ts.empty(0, 3)).shape == (0, 3)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        nn.init.orthogonal_(ts.empty(3))
    with pytest.warns(UserWarning, match="more than 2 std"):
        nn.init.trunc_normal_(ts.empty(3), mean=10.0)
