#!/usr/bin/env python
"""Polynomial regression with manual SGD (after pytorch/examples/regression)."""
from __future__ import print_function
from itertools import count

import numpy as np
import torch
import torch.nn.functional as F

POLY_DEGREE = 4
rng = np.random.RandomState(0)
W_target = torch.from_numpy(rng.randn(POLY_DEGREE, 1).astype(np.float32)) * 5
b_target = torch.from_numpy(rng.randn(1).astype(np.float32)) * 5


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = 'y = '
    for i, w in enumerate(W):
        result += '{:+.2f} x^{} '.format(w, i + 1)
    result += '{:+.2f}'.format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.from_numpy(rng.randn(batch_size).astype(np.float32))
    x = make_features(random)
    y = f(x)
    return x, y


# Define model
fc = torch.nn.Linear(W_target.size(0), 1)
with torch.no_grad():
    fc.weight.copy_(torch.from_numpy(np.linspace(-0.4, 0.4, POLY_DEGREE, dtype=np.float32)[None]))
    fc.bias.fill_(0.1)

for batch_idx in count(1):
    # Get data
    batch_x, batch_y = get_batch()

    # Reset gradients
    fc.zero_grad()

    # Forward pass
    output = F.smooth_l1_loss(fc(batch_x), batch_y)
    loss = output.item()
    if batch_idx % 25 == 0:
        print('batch {} loss {:.6f}'.format(batch_idx, loss))

    # Backward pass
    output.backward()

    # Apply gradients
    for param in fc.parameters():
        param.data.add_(-0.1 * param.grad)

    # Stop criterion
    if loss < 1e-3 or batch_idx >= 300:
        break

print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
print('==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias))
print('==> Actual function:\t' + poly_desc(W_target.view(-1), b_target))

# the same fit once more, with the in-place update under torch.no_grad
w = torch.zeros(POLY_DEGREE, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(100):
    x, y = get_batch()
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w.sub_(1e-3 * w.grad)
        b.sub_(1e-3 * b.grad)
        w.grad.zero_()
        b.grad.zero_()
    if step % 20 == 0:
        print('manual step {} loss {:.6f}'.format(step, loss.item()))
print(w.detach().squeeze().tolist(), b.item())
