"""torch-style programs over tessera.distributions (`import tessera as torch`): a REINFORCE
policy gradient over Categorical(logits=nn.Linear(...)) and a VAE-style loop with a Normal
posterior, rsample and kl_divergence to the prior. Each learns, and one step's gradients match
PyTorch's on the same weights and draws."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch as real_torch

import tessera as torch  # the programs below are written against the torch API
from tessera.distributions import Categorical, Normal, kl_divergence


def test_reinforce_policy_gradient_learns() -> None:
    torch.manual_seed(0)
    policy = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(policy.parameters(), lr=0.05)
    accuracy = []
    for _ in range(150):
        state = torch.randn(64, 4)
        dist = Categorical(logits=policy(state))
        action = dist.sample()
        target = (state[:, 0] > 0).long()
        reward = (action == target).float()
        loss = -(dist.log_prob(action) * (reward - reward.mean())).mean() \
            - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        accuracy.append(reward.mean().item())
    assert np.mean(accuracy[:10]) < 0.75
    assert np.mean(accuracy[-20:]) > 0.9


def _policy_step(lib: Any, w: np.ndarray, b: np.ndarray, state: np.ndarray,
                 action: np.ndarray, reward: np.ndarray) -> tuple:
    W = lib.tensor(w, requires_grad=True)
    B = lib.tensor(b, requires_grad=True)
    logits = lib.tensor(state) @ W.T + B
    dist = lib.distributions.Categorical(logits=logits)
    loss = -(dist.log_prob(lib.tensor(action)) * lib.tensor(reward)).mean() \
        - 0.01 * dist.entropy().mean()
    loss.backward()
    return loss.item(), W.grad.numpy(), B.grad.numpy()


def test_policy_gradient_step_matches_torch() -> None:
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 5)), rng.normal(size=3), rng.normal(size=(16, 5)),
            rng.integers(0, 3, size=16), rng.normal(size=16))
    got = _policy_step(torch, *args)
    want = _policy_step(real_torch, *args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


class VAE(torch.nn.Module):
    def __init__(self, d: int = 8, z: int = 2) -> None:
        super().__init__()
        self.enc = torch.nn.Linear(d, 2 * z)
        self.dec = torch.nn.Linear(z, d)

    def forward(self, x: Any) -> tuple:
        mu, logvar = self.enc(x).chunk(2, dim=-1)
        q = Normal(mu, torch.exp(0.5 * logvar))
        z = q.rsample()
        prior = Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl = kl_divergence(q, prior).sum(-1).mean()
        recon = ((self.dec(z) - x) ** 2).sum(-1).mean()
        return recon, kl


def test_vae_normal_kl_loop_learns() -> None:
    torch.manual_seed(1)
    basis = torch.randn(2, 8)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(300):
        x = torch.randn(64, 2) @ basis
        recon, kl = model(x)
        loss = recon + kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:10])
    assert all(p.grad is not None for p in model.parameters())


def _vae_step(lib: Any, w: np.ndarray, x: np.ndarray, eps: np.ndarray) -> tuple:
    W = lib.tensor(w, requires_grad=True)
    h = lib.tensor(x) @ W
    mu, logvar = h[:, :2], h[:, 2:]
    q = lib.distributions.Normal(mu, lib.exp(0.5 * logvar))
    z = q.loc + q.scale * lib.tensor(eps)  # rsample with fixed noise
    p = lib.distributions.Normal(lib.zeros_like(mu), lib.ones_like(mu))
    loss = lib.distributions.kl_divergence(q, p).sum() + (z ** 2).sum() \
        - q.log_prob(z).sum() + q.entropy().sum()
    loss.backward()
    return loss.item(), W.grad.numpy()


def test_vae_step_matches_torch() -> None:
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(6, 4)) * 0.3, rng.normal(size=(10, 6)), rng.normal(size=(10, 2)))
    got, want = _vae_step(torch, *args), _vae_step(real_torch, *args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)


def test_import_forms() -> None:
    import tessera.distributions as dist_mod
    from tessera.distributions.categorical import Categorical as C2
    from tessera.distributions.normal import Normal as N2
    assert torch.distributions is dist_mod and C2 is Categorical and N2 is Normal
    assert torch.distributions.constraints.real is dist_mod.constraints.real
