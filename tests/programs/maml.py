#!/usr/bin/env python
"""MAML on sine-wave regression (after the PyTorch functorch MAML example and the original
paper's setup): inner-loop SGD steps on a dict of parameters through
torch.func.functional_call, second-order meta-gradients with torch.autograd.grad(create_graph=True),
a batched version of the inner loop with torch.func.vmap(torch.func.grad(...)) over tasks, and
first-order MAML / Reptile as cheaper variants; Adam on the meta-parameters."""
import argparse
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(1, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 1)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def sample_tasks(rng, n_tasks, k):
    amp = rng.uniform(0.1, 5.0, size=(n_tasks, 1, 1))
    phase = rng.uniform(0, np.pi, size=(n_tasks, 1, 1))
    xs = rng.uniform(-5, 5, size=(n_tasks, 2 * k, 1))
    ys = amp * np.sin(xs + phase)
    x, y = torch.from_numpy(xs.astype(np.float32)), torch.from_numpy(ys.astype(np.float32))
    return x[:, :k], y[:, :k], x[:, k:], y[:, k:]


def inner_adapt(model, params, x, y, steps, lr, create_graph):
    for _ in range(steps):
        loss = F.mse_loss(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=create_graph)
        params = OrderedDict((name, p - lr * g) for (name, p), g in zip(params.items(), grads))
    return params


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--iters', type=int, default=25)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    model = Net()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    inner_lr, k = 0.01, 10

    for it in range(args.iters):
        xs, ys, xq, yq = sample_tasks(rng, 4, k)
        meta_opt.zero_grad()
        qry_losses = []
        for i in range(4):
            params = OrderedDict(model.named_parameters())
            adapted = inner_adapt(model, params, xs[i], ys[i], 2, inner_lr, create_graph=True)
            qry_loss = F.mse_loss(functional_call(model, adapted, (xq[i],)), yq[i])
            (qry_loss / 4).backward()  # second order: through the inner gradients
            qry_losses.append(qry_loss.item())
        meta_opt.step()
        if it % 5 == 4:
            print('iter {} meta loss {:.5f}'.format(it, float(np.mean(qry_losses))))

    # the inner loop batched over tasks with vmap(grad(...)) agrees with the loop above
    params = {n: p.detach() for n, p in model.named_parameters()}

    def task_loss(p, x, y):
        return F.mse_loss(functional_call(model, p, (x,)), y)

    def adapt_one(x, y):
        p = params
        for _ in range(2):
            g = grad(task_loss)(p, x, y)
            p = {n: p[n] - inner_lr * g[n] for n in p}
        return task_loss(p, x, y)

    xs, ys, xq, yq = sample_tasks(rng, 4, k)
    batched = vmap(adapt_one)(xs, ys)
    looped = torch.stack([F.mse_loss(functional_call(
        model, inner_adapt(model, OrderedDict((n, p.clone().requires_grad_())
                                              for n, p in params.items()),
                           xs[i], ys[i], 2, inner_lr, False),
        (xs[i],)), ys[i]) for i in range(4)])
    print('vmap adapted support loss {:.5f} matches loop {}'.format(
        batched.mean().item(), torch.allclose(batched, looped, rtol=1e-4, atol=1e-5)))

    # first-order MAML and Reptile steps
    fo_opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for it in range(5):
        xs, ys, xq, yq = sample_tasks(rng, 4, k)
        fo_opt.zero_grad()
        total = 0.0
        for i in range(4):
            params = OrderedDict((n, p.detach().requires_grad_()) for n, p in
                                 model.named_parameters())
            adapted = inner_adapt(model, params, xs[i], ys[i], 2, inner_lr, create_graph=False)
            adapted = OrderedDict((n, p.detach().requires_grad_()) for n, p in adapted.items())
            qry = F.mse_loss(functional_call(model, adapted, (xq[i],)), yq[i])
            gs = torch.autograd.grad(qry, list(adapted.values()))
            for p, g in zip(model.parameters(), gs):
                p.grad = g / 4 if p.grad is None else p.grad + g / 4
            total += qry.item()
        fo_opt.step()
        # Reptile: move toward the adapted weights of one task
        adapted = inner_adapt(model, OrderedDict(model.named_parameters()), xs[0], ys[0],
                              3, inner_lr, create_graph=False)
        with torch.no_grad():
            for p, a in zip(model.parameters(), adapted.values()):
                p.add_(a - p, alpha=0.1)
        print('first-order step {} query loss {:.5f}'.format(it, total / 4))


if __name__ == '__main__':
    main()
