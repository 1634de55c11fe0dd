"""ExponentialFamily (entropy and same-family KL by Bregman divergences of the log
normalizer), MixtureSameFamily, VonMises and LKJCholesky sampling, against
torch.distributions."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch

import tessera as ts

TD = torch.distributions
D = ts.distributions

EF_CASES = {
    "Normal": lambda M, L: M.Normal(L.tensor([0.3, -1.0]), L.tensor([2.0, 0.5])),
    "Bernoulli": lambda M, L: M.Bernoulli(L.tensor([0.3, 0.8])),
    "Beta": lambda M, L: M.Beta(L.tensor([0.7, 2.0]), L.tensor([1.5, 0.4])),
    "Dirichlet": lambda M, L: M.Dirichlet(L.tensor([[0.7, 2.0, 1.0], [1.5, 0.4, 3.0]])),
    "Exponential": lambda M, L: M.Exponential(L.tensor([0.3, 0.8])),
    "Gamma": lambda M, L: M.Gamma(L.tensor([0.3, 4.0]), L.tensor([2.0, 0.7])),
    "Chi2": lambda M, L: M.Chi2(L.tensor([0.9, 4.0])),
    "Poisson": lambda M, L: M.Poisson(L.tensor([0.9, 4.0])),
    "ContinuousBernoulli": lambda M, L: M.ContinuousBernoulli(L.tensor([0.2, 0.4995, 0.9])),
    "Wishart": lambda M, L: M.Wishart(L.tensor([3.0, 5.5]), covariance_matrix=L.tensor(
        [[[2.0, 0.5], [0.5, 1.0]], [[1.0, -0.3], [-0.3, 0.5]]])),
}


def _f64(f: Any, M: Any, L: Any) -> Any:
    old = L.get_default_dtype()
    L.set_default_dtype(L.float64)
    try:
        return f(M, L)
    finally:
        L.set_default_dtype(old)


def test_exponential_family_members_match_torch() -> None:
    want = sorted(n for n, c in vars(TD).items()
                  if inspect.isclass(c) and issubclass(c, TD.ExponentialFamily))
    got = sorted(n for n, c in vars(D).items()
                 if inspect.isclass(c) and issubclass(c, D.ExponentialFamily))
    assert set(got) <= set(want)
    assert {"Bernoulli", "Beta", "Chi2", "Dirichlet", "Exponential", "ExponentialFamily",
            "Gamma", "Normal", "Poisson"} <= set(got)
    assert not issubclass(D.Categorical, D.ExponentialFamily)


@pytest.mark.parametrize("name", sorted(EF_CASES))
def test_bregman_entropy_and_kl_match_torch(name: str) -> None:
    make = EF_CASES[name]
    d, t = _f64(make, D, ts), _f64(make, TD, torch)
    # the natural parameters and log normalizer
    for a, b in zip(d._natural_params, t._natural_params):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(d._log_normalizer(*d._natural_params).numpy(),
                               t._log_normalizer(*t._natural_params).detach().numpy(),
                               rtol=1e-12)
    if name in ("Beta", "Dirichlet", "Poisson"):  # no _mean_carrier_measure in torch either
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(d)
    else:
        got = D.ExponentialFamily.entropy(d)
        # atol: ContinuousBernoulli near p = 1/2 cancels to ~1e-7 (CUDA's log1p/expm1 differ
        # from the host's in the last bits there)
        np.testing.assert_allclose(got.numpy(), TD.ExponentialFamily.entropy(t).detach().numpy(),
                                   rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(got.numpy(), d.entropy().numpy(), rtol=1e-10, atol=1e-12)
    # KL by the Bregman divergence, against q with the parameters reversed along the batch
    from tessera.distributions.exp_family import _kl_expfamily_expfamily
    q_d = type(d).__new__(type(d))
    q_t = type(t).__new__(type(t))
    for src, dst in ((d, q_d), (t, q_t)):
        dst.__dict__.update({k: (v.flip(0) if hasattr(v, "flip") else v)
                             for k, v in src.__dict__.items()})
    got = _kl_expfamily_expfamily(d, q_d)
    want = TD.kl._kl_expfamily_expfamily(t, q_t).detach().numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.numpy(), D.kl_divergence(d, q_d).numpy(), rtol=1e-9,
                               atol=1e-12)


def test_expfamily_kl_dispatch() -> None:
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(ts.tensor([0.0, 1.0]), ts.tensor([1.0, 2.0])), D.Normal(0.5, 1.5)
    np.testing.assert_allclose(D.kl_divergence(p, p).numpy(), [0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(),
                               TD.kl_divergence(TD.Normal(torch.tensor([0.0, 1.0]),
                                                          torch.tensor([1.0, 2.0])),
                                                TD.Normal(0.5, 1.5)).numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Bernoulli(ts.tensor(0.3)), D.Beta(1.0, 2.0))


def test_mixture_sampling_moments_and_seed() -> None:
    mix = D.Categorical(ts.tensor([0.2, 0.3, 0.5], dtype=ts.float64))
    comp = D.Normal(ts.tensor([-3.0, 0.0, 4.0], dtype=ts.float64),
                    ts.tensor([1.0, 0.5, 2.0], dtype=ts.float64))
    m = D.MixtureSameFamily(mix, comp)
    ts.manual_seed(0)
    x = m.sample((40000,))
    ts.manual_seed(0)
    assert bool((m.sample((40000,)) == x).all())
    assert tuple(x.shape) == (40000,)
    assert abs(float(x.mean()) - float(m.mean)) < 4 * float(m.stddev) / 200
    assert abs(float(x.var()) / float(m.variance) - 1) < 0.05
    # component weights: the fraction of draws near each mode
    frac_right = float((x > 2.0).to(ts.float64).mean())
    assert abs(frac_right - float(1 - m.cdf(ts.tensor(2.0, dtype=ts.float64)))) < 0.015
    # a batch of 2-d mixtures
    m2 = D.MixtureSameFamily(D.Categorical(logits=ts.zeros(3, 4)),
                             D.Independent(D.Normal(ts.zeros(3, 4, 2), ts.ones(3, 4, 2)), 1))
    assert tuple(m2.sample((5,)).shape) == (5, 3, 2)
    assert tuple(m2.log_prob(m2.sample((5,))).shape) == (5, 3)


def test_von_mises_sampling() -> None:
    loc = ts.tensor([0.5, -3.0, 2.0], dtype=ts.float64)
    conc = ts.tensor([0.01, 1.0, 20.0], dtype=ts.float64)
    d = D.VonMises(loc, conc)
    ts.manual_seed(3)
    x = d.sample((20000,))
    ts.manual_seed(3)
    assert bool((d.sample((20000,)) == x).all())
    assert tuple(x.shape) == (20000, 3) and x.dtype == ts.float64
    assert bool((x >= -np.pi).all()) and bool((x < np.pi).all())
    # E cos(x - loc) = I1(k) / I0(k) = 1 - circular variance; E sin(x - loc) = 0
    c = ts.cos(x - loc).mean(0).numpy()
    s = ts.sin(x - loc).mean(0).numpy()
    np.testing.assert_allclose(c, 1 - d.variance.numpy(), atol=0.015)
    np.testing.assert_allclose(s, 0, atol=0.015)
    f32 = D.VonMises(ts.tensor([1.0]), ts.tensor([2.0])).sample((3,))
    assert f32.dtype == ts.float32 and tuple(f32.shape) == (3, 1)


def test_lkj_cholesky_sampling() -> None:
    d = D.LKJCholesky(4, ts.tensor([0.5, 3.0], dtype=ts.float64))
    ts.manual_seed(5)
    L = d.sample((8000,))
    assert tuple(L.shape) == (8000, 2, 4, 4)
    assert bool(D.constraints.corr_cholesky.check(L).all())
    corr = (L @ L.mT).numpy()
    # corr[1, 0] is 2 Beta(b, b) - 1 with b = eta - 1 + d / 2: mean 0, var 1 / (2 b + 1)
    var = 1 / (2 * (np.array([0.5, 3.0]) - 1 + 2) + 1)
    np.testing.assert_allclose(corr[..., 1, 0].mean(0), 0, atol=0.03)
    np.testing.assert_allclose(corr[..., 1, 0].var(0), var, rtol=0.06)
    # the other entries as torch's sampler (the same onion construction) spreads them
    torch.manual_seed(5)
    want = (lambda t: t @ t.mT)(TD.LKJCholesky(4, torch.tensor([0.5, 3.0], dtype=torch.float64))
                                .sample((8000,))).numpy()
    for i, j in ((2, 0), (2, 1), (3, 2)):
        np.testing.assert_allclose(corr[..., i, j].var(0), want[..., i, j].var(0), rtol=0.08)
    assert np.isfinite(d.log_prob(L).numpy()).all()


def test_straight_through_rsample() -> None:
    logits = ts.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    d = D.OneHotCategoricalStraightThrough(logits=logits)
    ts.manual_seed(2)
    x = d.rsample((4,))
    assert tuple(x.shape) == (4, 1, 3) and bool((x.sum(-1) == 1).all())
    (x * ts.tensor([1.0, 2.0, 3.0])).sum().backward()
    t = torch.tensor([[0.5, -1.0, 2.0]], requires_grad=True)
    (4 * torch.softmax(t, -1) * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_logistic_normal_sampling() -> None:
    loc = ts.tensor([0.5, -1.0, 0.0], dtype=ts.float64, requires_grad=True)
    d = D.LogisticNormal(loc, ts.tensor([0.3, 0.5, 1.0], dtype=ts.float64))
    ts.manual_seed(4)
    x = d.rsample((20000,))
    assert tuple(x.shape) == (20000, 4) and bool(D.constraints.simplex.check(x).all())
    # the stick-breaking inverse recovers Normal(loc, scale) draws
    z = D.transforms.StickBreakingTransform().inv(x)
    np.testing.assert_allclose(z.mean(0).detach().numpy(), [0.5, -1.0, 0.0], atol=0.03)
    np.testing.assert_allclose(z.std(0).detach().numpy(), [0.3, 0.5, 1.0], rtol=0.03)
    x[:, 0].sum().backward()  # reparameterized: d x0 / d loc0 > 0
    assert float(loc.grad[0]) > 0
