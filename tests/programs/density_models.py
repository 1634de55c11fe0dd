#!/usr/bin/env python
"""Density models with torch.distributions, trained by maximum likelihood on NumPy data:
a mixture density network (Categorical + Independent(Normal) in MixtureSameFamily) for an
inverse sine problem, a RealNVP normalizing flow on two moons (affine couplings with a
log-det-Jacobian, an Independent(Normal) base), a full-covariance MultivariateNormal through a
Cholesky factor (tril, softplus, diag_embed), and a TransformedDistribution (Affine then Tanh)
fitted to bounded data; plus analytic kl_divergence, entropy, cdf/icdf and rsample."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributions as D
from torch.distributions import transforms as T


class MDN(nn.Module):
    def __init__(self, n_hidden=32, n_components=5):
        super().__init__()
        self.n_components = n_components
        self.body = nn.Sequential(nn.Linear(1, n_hidden), nn.Tanh(),
                                  nn.Linear(n_hidden, n_hidden), nn.Tanh())
        self.pi = nn.Linear(n_hidden, n_components)
        self.mu = nn.Linear(n_hidden, n_components)
        self.sigma = nn.Linear(n_hidden, n_components)

    def forward(self, x):
        h = self.body(x)
        mix = D.Categorical(logits=self.pi(h))
        comp = D.Normal(self.mu(h), F.softplus(self.sigma(h)) + 1e-3)
        return D.MixtureSameFamily(mix, comp)


class Coupling(nn.Module):
    def __init__(self, mask, hidden=32):
        super().__init__()
        self.register_buffer('mask', mask)
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                 nn.Linear(hidden, 4))
        self.scale = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        """data -> latent; returns z and log|det dz/dx|."""
        x_masked = x * self.mask
        s, t = self.net(x_masked).chunk(2, dim=1)
        s = self.scale * torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        z = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
        return z, s.sum(dim=1)

    def inverse(self, z):
        z_masked = z * self.mask
        s, t = self.net(z_masked).chunk(2, dim=1)
        s = self.scale * torch.tanh(s) * (1 - self.mask)
        t = t * (1 - self.mask)
        return z_masked + (1 - self.mask) * (z - t) * torch.exp(-s)


class RealNVP(nn.Module):
    def __init__(self, n_layers=4):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                 for i in range(n_layers)]
        self.layers = nn.ModuleList([Coupling(m) for m in masks])
        self.register_buffer('base_loc', torch.zeros(2))
        self.register_buffer('base_scale', torch.ones(2))

    @property
    def base(self):
        return D.Independent(D.Normal(self.base_loc, self.base_scale), 1)

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return self.base.log_prob(x) + log_det

    def sample(self, n):
        z = self.base.sample((n,))
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


class CholeskyGaussian(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.raw_tril = nn.Parameter(torch.zeros(dim, dim))

    def forward(self):
        tril = torch.tril(self.raw_tril, diagonal=-1)
        diag = F.softplus(torch.diagonal(self.raw_tril)) + 1e-4
        scale_tril = tril + torch.diag_embed(diag)
        return D.MultivariateNormal(self.loc, scale_tril=scale_tril)


def make_moons(rng, n, noise=0.08):
    n_out = n // 2
    n_in = n - n_out
    outer = np.stack([np.cos(np.linspace(0, np.pi, n_out)), np.sin(np.linspace(0, np.pi, n_out))], 1)
    inner = np.stack([1 - np.cos(np.linspace(0, np.pi, n_in)),
                      1 - np.sin(np.linspace(0, np.pi, n_in)) - 0.5], 1)
    x = np.concatenate([outer, inner]) + noise * rng.randn(n, 2)
    return torch.from_numpy(x.astype(np.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=60)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    D.Distribution.set_default_validate_args(True)

    # inverse problem: x = y + 0.3 sin(2 pi y) + noise, predict y from x (multi-modal)
    y = rng.uniform(0, 1, size=(512, 1))
    x = y + 0.3 * np.sin(2 * np.pi * y) + 0.05 * rng.randn(512, 1)
    x, y = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.float32))
    moons = make_moons(rng, 512)
    cov = np.array([[1.0, 0.8, 0.2], [0.8, 1.5, -0.3], [0.2, -0.3, 0.7]])
    gauss = torch.from_numpy(rng.multivariate_normal([1.0, -2.0, 0.5], cov, size=400)
                             .astype(np.float32))
    bounded = torch.from_numpy(np.tanh(0.5 + 0.7 * rng.randn(400)).astype(np.float32) * 0.98)

    mdn, flow, chol = MDN(), RealNVP(), CholeskyGaussian(3)
    tanh_loc = nn.Parameter(torch.zeros(()))
    tanh_log_scale = nn.Parameter(torch.zeros(()))
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            mdn.load_state_dict(state['mdn'])
            flow.load_state_dict(state['flow'])
        else:
            torch.save({'mdn': mdn.state_dict(), 'flow': flow.state_dict()}, args.init)

    params = (list(mdn.parameters()) + list(flow.parameters()) + list(chol.parameters())
              + [tanh_loc, tanh_log_scale])
    optimizer = torch.optim.Adam(params, lr=5e-3)
    for step in range(args.steps):
        optimizer.zero_grad()
        mdn_loss = -mdn(x).log_prob(y.squeeze(1)).mean()
        flow_loss = -flow.log_prob(moons).mean()
        mvn_loss = -chol().log_prob(gauss).mean()
        squashed = D.TransformedDistribution(
            D.Normal(tanh_loc, 1.0),
            [T.AffineTransform(loc=0.0, scale=tanh_log_scale.exp()), T.TanhTransform(cache_size=1)])
        tanh_loss = -squashed.log_prob(bounded).mean()
        loss = mdn_loss + flow_loss + mvn_loss + tanh_loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 5.0)
        optimizer.step()
        if step % 10 == 9:
            print('step {} loss {:.5f} mdn loss {:.5f} flow loss {:.5f} mvn loss {:.5f} '
                  'tanh loss {:.5f}'.format(step, loss.item(), mdn_loss.item(), flow_loss.item(),
                                            mvn_loss.item(), tanh_loss.item()))

    with torch.no_grad():
        mvn = chol()
        emp = torch.cov(gauss.T)
        print('mvn mean', [round(v, 3) for v in mvn.mean.tolist()],
              'cov err {:.4f}'.format((mvn.covariance_matrix - emp).abs().max().item()))
        print('mvn entropy {:.4f}'.format(mvn.entropy().item()))
        ref = D.MultivariateNormal(gauss.mean(0), covariance_matrix=emp)
        print('kl(fit || empirical) {:.5f}'.format(D.kl_divergence(mvn, ref).item()))
        mix = mdn(torch.tensor([[0.5]]))
        print('mdn mixture weights', [round(v, 3) for v in mix.mixture_distribution.probs[0].tolist()])
        print('mdn mean {:.4f} variance {:.4f}'.format(mix.mean.item(), mix.variance.item()))
        grid = torch.linspace(0.01, 0.99, 5)
        print('mdn log_prob grid', [round(v, 3) for v in mix.log_prob(grid[:, None]).squeeze(1).tolist()])
        print('mdn cdf', [round(v, 3) for v in mix.cdf(grid[:, None]).squeeze(1).tolist()])
        n = D.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
        print('normal icdf', [round(v, 4) for v in n.icdf(torch.tensor([0.9, 0.1])).tolist()],
              'kl', [round(v, 4) for v in D.kl_divergence(n, D.Normal(0.5, 1.5)).tolist()])
        samples = flow.sample(2000)
        print('flow sample mean', [round(v, 1) for v in samples.mean(0).tolist()])
        for k, v in [('cat', D.Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))),
                     ('bern', D.Bernoulli(logits=torch.tensor([0.3, -1.0])))]:
            print(k, 'entropy', [round(e, 4) for e in torch.atleast_1d(v.entropy()).tolist()])

    # a reparameterised gradient: d/dmu E[(z - 2)^2] for z ~ N(mu, 1) is 2 (mu - 2)
    mu = torch.tensor(0.5, requires_grad=True)
    z = D.Normal(mu, 1.0).rsample((20000,))
    ((z - 2.0) ** 2).mean().backward()
    print('rsample grad ok', abs(mu.grad.item() - 2 * (0.5 - 2.0)) < 0.15)
    try:
        D.Normal(0.0, -1.0)
    except ValueError as e:
        print('validate_args', type(e).__name__)


if __name__ == '__main__':
    main()
