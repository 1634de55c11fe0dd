#!/usr/bin/env python
"""Hinton's forward-forward algorithm on MNIST (after pytorch/examples mnist_forward_forward):
each layer is trained locally to give a high "goodness" to images overlaid with their true
label and a low one to images overlaid with a wrong label; no gradient flows between layers."""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam


def load_mnist(root, kind, n):
    with gzip.open(os.path.join(root, '%s-images-idx3-ubyte.gz' % kind), 'rb') as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)[:n]
    with gzip.open(os.path.join(root, '%s-labels-idx1-ubyte.gz' % kind), 'rb') as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)[:n]
    x = (x.astype(np.float32) / 255. - 0.1307) / 0.3081  # ToTensor + Normalize + Lambda(flatten)
    return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))


def overlay_y_on_x(x, y):
    """Replace the first 10 pixels of data [x] with one-hot-encoded label [y]"""
    x_ = x.clone()
    x_[:, :10] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims, lr, epochs):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers += [Layer(dims[d], dims[d + 1], lr, epochs)]
        self.layers = nn.ModuleList(self.layers)

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness += [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train_net(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print('training layer', i, '...')
            h_pos, h_neg = layer.train_layer(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, lr, epochs, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = None
        self.lr = lr
        self.threshold = 2.0
        self.num_epochs = epochs

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_layer(self, x_pos, x_neg):
        if self.opt is None:
            self.opt = Adam(self.parameters(), lr=self.lr)
        for i in range(self.num_epochs):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            # The following loss pushes pos (neg) samples to values larger (smaller) than the
            # self.threshold.
            loss = torch.log(1 + torch.exp(torch.cat([-g_pos + self.threshold,
                                                      g_neg - self.threshold]))).mean()
            self.opt.zero_grad()
            # this backward just compute the derivative and hence is not considered
            # backpropagation.
            loss.backward()
            self.opt.step()
            if i % 5 == 0 or i == self.num_epochs - 1:
                print('    epoch {} loss: {:.6f}'.format(i, loss.item()))
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def main():
    parser = argparse.ArgumentParser(description='PyTorch Forward-Forward Example')
    parser.add_argument('--data', type=str, required=True)
    parser.add_argument('--epochs', type=int, default=20)
    parser.add_argument('--lr', type=float, default=0.03)
    parser.add_argument('--train-size', type=int, default=1000)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    x, y = load_mnist(args.data, 'train', args.train_size)
    x_te, y_te = load_mnist(args.data, 't10k', 500)

    net = Net([784, 100, 100], args.lr, args.epochs)
    if args.init:
        if os.path.exists(args.init):
            net.load_state_dict(torch.load(args.init))
        else:
            torch.save(net.state_dict(), args.init)
    x_pos = overlay_y_on_x(x, y)
    y_neg = (y + torch.from_numpy(rng.randint(1, 10, size=y.shape[0]))) % 10
    x_neg = overlay_y_on_x(x, y_neg)
    net.train_net(x_pos, x_neg)
    print('train error: {:.4f}'.format(1.0 - net.predict(x).eq(y).float().mean().item()))
    print('test error: {:.4f}'.format(1.0 - net.predict(x_te).eq(y_te).float().mean().item()))


if __name__ == '__main__':
    main()
