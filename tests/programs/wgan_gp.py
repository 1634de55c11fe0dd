#!/usr/bin/env python
"""WGAN-GP on the 8-Gaussians toy (after the gan_toy.py of Gulrajani et al. and the
pytorch-gan-collection code): a critic trained n_critic times per generator step with the
gradient penalty from torch.autograd.grad(create_graph=True), requires_grad_(False) on the critic
during the generator step, a spectrally normalised generator, Adam with betas (0.5, 0.9), an R1
penalty variant with double backward through Softplus/ELU, and a Hessian-vector product with
torch.autograd.functional.hvp; the noise comes from NumPy."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd


class Generator(nn.Module):
    def __init__(self, nz=4, dim=64):
        super().__init__()
        self.main = nn.Sequential(
            nn.utils.spectral_norm(nn.Linear(nz, dim)), nn.ReLU(True),
            nn.utils.spectral_norm(nn.Linear(dim, dim)), nn.ReLU(True),
            nn.Linear(dim, 2))

    def forward(self, noise):
        return self.main(noise)


class Critic(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(2, dim), nn.LeakyReLU(0.2), nn.Linear(dim, dim),
                                  nn.ELU(), nn.Linear(dim, dim), nn.Softplus(beta=2.0),
                                  nn.Linear(dim, 1))

    def forward(self, inputs):
        return self.main(inputs).view(-1)


def calc_gradient_penalty(netD, real_data, fake_data, alpha, lambda_gp):
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = interpolates.detach().requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lambda_gp


def r1_penalty(netD, real_data, gamma):
    real = real_data.detach().requires_grad_()
    out = netD(real)
    grad_real, = autograd.grad(out.sum(), real, create_graph=True)
    return 0.5 * gamma * grad_real.pow(2).sum(dim=1).mean()


def eight_gaussians(rng, batch_size, scale=2.0):
    centers = [(1, 0), (-1, 0), (0, 1), (0, -1), (1. / np.sqrt(2), 1. / np.sqrt(2)),
               (1. / np.sqrt(2), -1. / np.sqrt(2)), (-1. / np.sqrt(2), 1. / np.sqrt(2)),
               (-1. / np.sqrt(2), -1. / np.sqrt(2))]
    centers = np.array(centers) * scale
    idx = rng.randint(0, 8, size=batch_size)
    points = centers[idx] + 0.02 * rng.randn(batch_size, 2)
    return torch.from_numpy((points / 1.414).astype(np.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--iters', type=int, default=30)
    parser.add_argument('--critic-iters', type=int, default=5)
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(1)
    rng = np.random.RandomState(1)
    netG, netD = Generator(), Critic()
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            netG.load_state_dict(state['G'])
            netD.load_state_dict(state['D'])
        else:
            torch.save({'G': netG.state_dict(), 'D': netD.state_dict()}, args.init)
    print(sorted(k for k in netG.state_dict() if k.startswith('main.0')))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.9))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.9))
    one = torch.tensor(1, dtype=torch.float)
    mone = one * -1

    for iteration in range(args.iters):
        # (1) Update D network
        for p in netD.parameters():
            p.requires_grad = True
        for _ in range(args.critic_iters):
            real_data = eight_gaussians(rng, args.batch_size)
            netD.zero_grad()
            D_real = netD(real_data).mean()
            D_real.backward(mone)
            noise = torch.from_numpy(rng.randn(args.batch_size, 4).astype(np.float32))
            with torch.no_grad():
                fake = netG(noise)
            D_fake = netD(fake).mean()
            D_fake.backward(one)
            alpha = torch.from_numpy(rng.rand(args.batch_size, 1).astype(np.float32))
            gradient_penalty = calc_gradient_penalty(netD, real_data, fake, alpha, 0.1)
            gradient_penalty.backward()
            D_cost = D_fake - D_real + gradient_penalty
            Wasserstein_D = D_real - D_fake
            optimizerD.step()

        # (2) Update G network
        for p in netD.parameters():
            p.requires_grad_(False)  # to avoid computation
        netG.zero_grad()
        noise = torch.from_numpy(rng.randn(args.batch_size, 4).astype(np.float32))
        fake = netG(noise)
        G = netD(fake).mean()
        G.backward(mone)
        G_cost = -G
        optimizerG.step()
        assert all(p.grad is None or not p.requires_grad for p in netD.parameters())
        if iteration % 5 == 4:
            print('iter {} D loss {:.5f} G loss {:.5f} W distance {:.5f} gp {:.6f}'.format(
                iteration, D_cost.item(), G_cost.item(), Wasserstein_D.item(),
                gradient_penalty.item()))

    # an R1-regularised critic step, then second-order quantities of the critic
    for p in netD.parameters():
        p.requires_grad_(True)
    real_data = eight_gaussians(rng, args.batch_size)
    optimizerD.zero_grad()
    r1 = r1_penalty(netD, real_data, gamma=10.0)
    r1.backward()
    # the last bias does not reach the input gradient: its .grad stays None
    grads = [p.grad for p in netD.parameters() if p.grad is not None]
    print("params with grad", len(grads), "of", len(list(netD.parameters())))
    grad_norm = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    print('r1 loss {:.6f} grad norm {:.6f}'.format(r1.item(), grad_norm.item()))
    x0 = real_data[:1].clone()
    v = torch.tensor([[1.0, -0.5]])
    f = lambda inp: netD(inp).sum()
    _, hvp = torch.autograd.functional.hvp(f, x0, v)
    hess = torch.autograd.functional.hessian(f, x0).reshape(2, 2)
    print('hvp', [round(t, 5) for t in hvp.flatten().tolist()],
          'hessian symmetric', torch.allclose(hess, hess.T, atol=1e-5),
          'hvp matches', torch.allclose(hess @ v.flatten(), hvp.flatten(), atol=1e-5))
    with torch.no_grad():
        samples = netG(torch.from_numpy(rng.randn(512, 4).astype(np.float32)))
        radius = samples.norm(dim=1)
    print('sample radius mean {:.4f} std {:.4f}'.format(radius.mean().item(), radius.std().item()))


if __name__ == '__main__':
    main()
