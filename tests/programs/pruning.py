#!/usr/bin/env python
"""Pruning a LeNet (after the PyTorch pruning tutorial), then lottery-ticket style: train,
prune globally by magnitude, rewind the surviving weights to their initial values, retrain,
prune again, make the pruning permanent."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class FooBarPruningMethod(prune.BasePruningMethod):
    """Prune every other entry in a tensor."""
    PRUNING_TYPE = 'unstructured'

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


def foobar_unstructured(module, name):
    FooBarPruningMethod.apply(module, name)
    return module


def train(model, x, y, steps, lr, tag):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print('{} step {} loss: {:.6f}'.format(tag, step, loss.item()))


def sparsity(model):
    zeros = total = 0
    for name in ('conv1', 'conv2', 'fc1', 'fc2', 'fc3'):
        w = getattr(model, name).weight
        zeros += float(torch.sum(w == 0))
        total += float(w.nelement())
    return 100. * zeros / total


def tutorial_section():
    """The tutorial's walk through the API on a fresh model (its random method draws from the
    generator, so nothing printed here is a loss)."""
    model = LeNet()
    module = model.conv1
    print(list(n for n, _ in module.named_parameters()), list(n for n, _ in module.named_buffers()))
    prune.random_unstructured(module, name="weight", amount=0.3)
    print(list(n for n, _ in module.named_parameters()), list(n for n, _ in module.named_buffers()))
    print('zeros in conv1.weight:', int(torch.sum(module.weight == 0)))
    prune.l1_unstructured(module, name="bias", amount=3)
    print('zeros in conv1.bias:', int(torch.sum(module.bias == 0)))
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":
            break
    print(type(hook).__name__, [type(h).__name__ for h in hook])
    print(list(model.state_dict().keys()))
    prune.remove(module, 'weight')
    print(list(n for n, _ in module.named_parameters()))
    new_model = LeNet()
    for name, m in new_model.named_modules():
        if isinstance(m, torch.nn.Conv2d):
            prune.l1_unstructured(m, name='weight', amount=0.2)
        elif isinstance(m, torch.nn.Linear):
            prune.l1_unstructured(m, name='weight', amount=0.4)
    print(dict(new_model.named_buffers()).keys())
    print('pruned:', prune.is_pruned(new_model))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=6)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x = torch.from_numpy(rng.randn(32, 1, 28, 28).astype(np.float32))
    y = torch.from_numpy(rng.randint(0, 10, size=32).astype(np.int64))

    model = LeNet()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    init_state = {k: v.clone() for k, v in model.state_dict().items()}

    tutorial_section()

    train(model, x, y, args.steps, 0.05, 'dense')
    parameters_to_prune = (
        (model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'),
        (model.fc2, 'weight'), (model.fc3, 'weight'),
    )
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured,
                              amount=0.2)
    print('Global sparsity: {:.2f}%'.format(sparsity(model)))
    with torch.no_grad():  # rewind: the surviving weights start again from their init
        for module, name in parameters_to_prune:
            key = [k for k, m in model.named_modules() if m is module][0] + '.' + name
            getattr(module, name + '_orig').copy_(init_state[key])
        print('rewound loss: {:.6f}'.format(F.cross_entropy(model(x), y).item()))
    train(model, x, y, args.steps, 0.05, 'ticket 1')
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured,
                              amount=0.2)
    prune.ln_structured(model.fc2, 'weight', amount=8, n=1, dim=0)
    foobar_unstructured(model.fc3, name='bias')
    print('Global sparsity: {:.2f}%'.format(sparsity(model)))
    train(model, x, y, args.steps, 0.05, 'ticket 2')
    for module, name in parameters_to_prune:
        prune.remove(module, name)
    prune.remove(model.fc3, 'bias')
    print('pruned:', prune.is_pruned(model), list(model.state_dict().keys()))
    with torch.no_grad():
        print('final loss: {:.6f}'.format(F.cross_entropy(model(x), y).item()))


if __name__ == '__main__':
    main()
