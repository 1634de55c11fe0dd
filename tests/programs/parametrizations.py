#!/usr/bin/env python
"""Training with torch.nn.utils.parametrizations (after the PyTorch parametrizations
tutorial): weight_norm and spectral_norm on a classifier, an orthogonal recurrent matrix, a
hand-written Symmetric parametrization registered with register_parametrization, caching
with parametrize.cached(), and remove_parametrizations at the end."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = weight_norm(nn.Linear(10, 32))
        self.fc2 = spectral_norm(nn.Linear(32, 32))
        self.rec = nn.Linear(32, 32, bias=False)
        orthogonal(self.rec)
        self.sym = nn.Linear(32, 32, bias=False)
        parametrize.register_parametrization(self.sym, "weight", Symmetric())
        self.out = nn.Linear(32, 3)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = F.relu(self.fc2(h))
        for _ in range(2):
            h = torch.tanh(self.rec(h) + self.sym(h))
        return self.out(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=12)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(64, 10).astype(np.float32))
    y = torch.from_numpy((x[:, 0] > 0).long().numpy() + (x[:, 1] > 0.5).long().numpy())

    model = Net()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    print(sorted(model.state_dict().keys()))
    print('parametrized:', parametrize.is_parametrized(model.fc1),
          parametrize.is_parametrized(model.fc1, 'bias'), type(model.rec.parametrizations.weight[0]).__name__)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(args.steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        with torch.no_grad():
            W = model.rec.weight
            ortho_err = (W.T @ W - torch.eye(32)).abs().max().item()
            sigma = torch.linalg.matrix_norm(model.fc2.weight, 2).item()
            sym_err = (model.sym.weight - model.sym.weight.T).abs().max().item()
        print('step {} loss: {:.6f} orthogonal {} spectral {:.3f} symmetric {}'.format(
            step, loss.item(), ortho_err < 1e-4, sigma, sym_err == 0))
    model.eval()
    with torch.no_grad(), parametrize.cached():
        print('eval loss: {:.6f}'.format(F.cross_entropy(model(x), y).item()))
    g = model.fc1.parametrizations.weight.original0
    v = model.fc1.parametrizations.weight.original1
    print('weight_norm g', tuple(g.shape), 'v', tuple(v.shape))
    parametrize.remove_parametrizations(model.fc1, 'weight')
    parametrize.remove_parametrizations(model.rec, 'weight', leave_parametrized=True)
    parametrize.remove_parametrizations(model.sym, 'weight')
    print(sorted(n for n, _ in model.named_parameters()))
    with torch.no_grad():
        print('after removal loss: {:.6f}'.format(F.cross_entropy(model(x), y).item()))


if __name__ == '__main__':
    main()
