#!/usr/bin/env python
"""A 2-D Fourier neural operator (after zongyi-li/fourier_neural_operator fourier_2d.py and the
neuraloperator package) learning the solution map of a smoothing PDE on periodic fields:
complex-valued nn.Parameters (torch.rand(..., dtype=torch.cfloat)) trained by Adam, torch.fft.rfft2
/ irfft2(s=...) with norm='ortho', complex einsum 'bixy,ioxy->boxy' on the retained modes, a
grid of coordinates concatenated to the input, an FNet-style token mixer
(torch.fft.fft2(x).real), the relative L2 loss (LpLoss) and StepLR."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, modes1, modes2):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.modes1 = modes1
        self.modes2 = modes2
        self.scale = (1 / (in_channels * out_channels))
        self.weights1 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels,
                                                             self.modes1, self.modes2,
                                                             dtype=torch.cfloat))
        self.weights2 = nn.Parameter(self.scale * torch.rand(in_channels, out_channels,
                                                             self.modes1, self.modes2,
                                                             dtype=torch.cfloat))

    def compl_mul2d(self, input, weights):
        # (batch, in_channel, x,y ), (in_channel, out_channel, x,y) -> (batch, out_channel, x,y)
        return torch.einsum("bixy,ioxy->boxy", input, weights)

    def forward(self, x):
        batchsize = x.shape[0]
        x_ft = torch.fft.rfft2(x, norm='ortho')
        out_ft = torch.zeros(batchsize, self.out_channels, x.size(-2), x.size(-1) // 2 + 1,
                             dtype=torch.cfloat, device=x.device)
        out_ft[:, :, :self.modes1, :self.modes2] = \
            self.compl_mul2d(x_ft[:, :, :self.modes1, :self.modes2], self.weights1)
        out_ft[:, :, -self.modes1:, :self.modes2] = \
            self.compl_mul2d(x_ft[:, :, -self.modes1:, :self.modes2], self.weights2)
        return torch.fft.irfft2(out_ft, s=(x.size(-2), x.size(-1)), norm='ortho')


class FNO2d(nn.Module):
    def __init__(self, modes1, modes2, width):
        super().__init__()
        self.width = width
        self.p = nn.Linear(3, self.width)  # input channel is 3: (a(x, y), x, y)
        self.convs = nn.ModuleList([SpectralConv2d(width, width, modes1, modes2)
                                    for _ in range(3)])
        self.ws = nn.ModuleList([nn.Conv2d(width, width, 1) for _ in range(3)])
        self.q1 = nn.Linear(self.width, 32)
        self.q2 = nn.Linear(32, 1)

    def forward(self, x):
        grid = self.get_grid(x.shape, x.device)
        x = torch.cat((x, grid), dim=-1)
        x = self.p(x)
        x = x.permute(0, 3, 1, 2)
        for k, (conv, w) in enumerate(zip(self.convs, self.ws)):
            x = conv(x) + w(x)
            if k < len(self.convs) - 1:
                x = F.gelu(x)
        x = x.permute(0, 2, 3, 1)
        return self.q2(F.gelu(self.q1(x)))

    def get_grid(self, shape, device):
        batchsize, size_x, size_y = shape[0], shape[1], shape[2]
        gridx = torch.tensor(np.linspace(0, 1, size_x), dtype=torch.float)
        gridx = gridx.reshape(1, size_x, 1, 1).repeat([batchsize, 1, size_y, 1])
        gridy = torch.tensor(np.linspace(0, 1, size_y), dtype=torch.float)
        gridy = gridy.reshape(1, 1, size_y, 1).repeat([batchsize, size_x, 1, 1])
        return torch.cat((gridx, gridy), dim=-1).to(device)


class FNetMixer(nn.Module):
    """FNet's Fourier token mixing, as an auxiliary residual branch on the field."""

    def forward(self, x):
        return torch.fft.fft2(x, dim=(1, 2)).real / (x.shape[1] * x.shape[2]) ** 0.5


class LpLoss(object):
    def __init__(self, p=2, size_average=True):
        self.p = p
        self.size_average = size_average

    def rel(self, x, y):
        num_examples = x.size()[0]
        diff_norms = torch.norm(x.reshape(num_examples, -1) - y.reshape(num_examples, -1),
                                self.p, 1)
        y_norms = torch.norm(y.reshape(num_examples, -1), self.p, 1)
        return torch.mean(diff_norms / y_norms) if self.size_average else torch.sum(diff_norms / y_norms)

    def __call__(self, x, y):
        return self.rel(x, y)


def make_pairs(rng, n, s=16):
    """a: a random smooth periodic field; u: the solution of (1 - 0.02 Laplacian) u = a^3 + a,
    solved spectrally with NumPy."""
    k = np.fft.fftfreq(s) * s
    kx, ky = np.meshgrid(k, k, indexing='ij')
    decay = np.exp(-0.15 * (kx ** 2 + ky ** 2))
    a = np.fft.ifft2(decay * (rng.randn(n, s, s) + 1j * rng.randn(n, s, s))).real * s
    rhs = a ** 3 + a
    u = np.fft.ifft2(np.fft.fft2(rhs) / (1 + 0.02 * (kx ** 2 + ky ** 2))).real
    return (torch.from_numpy(a[..., None].astype(np.float32)),
            torch.from_numpy(u[..., None].astype(np.float32)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    x_train, y_train = make_pairs(rng, 64)
    x_test, y_test = make_pairs(rng, 16)
    model = FNO2d(modes1=4, modes2=4, width=12)
    mixer = FNetMixer()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    n_complex = sum(p.numel() for p in model.parameters() if p.is_complex())
    print('parameters', sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters()),
          'complex', n_complex, model.convs[0].weights1.dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    myloss = LpLoss(size_average=False)
    for ep in range(args.epochs):
        model.train()
        train_l2 = 0.0
        for b in range(0, len(x_train), 8):
            x, y = x_train[b:b + 8], y_train[b:b + 8]
            optimizer.zero_grad()
            out = model(x + 0.1 * mixer(x))
            loss = myloss(out.view(8, -1), y.view(8, -1))
            loss.backward()
            optimizer.step()
            train_l2 += loss.item()
        scheduler.step()
        model.eval()
        with torch.no_grad():
            out = model(x_test + 0.1 * mixer(x_test))
            test_l2 = myloss(out.view(16, -1), y_test.view(16, -1)).item()
            mse = F.mse_loss(out, y_test).item()
        print('epoch {} train l2 loss {:.5f} test l2 loss {:.5f} test mse {:.6f}'.format(
            ep, train_l2 / len(x_train), test_l2 / len(x_test), mse))
    w = model.convs[0].weights1
    print('weights1 |w| mean {:.5f} angle mean {:.5f} grad dtype {}'.format(
        w.detach().abs().mean().item(), torch.angle(w.detach()).mean().item(), w.grad.dtype))


if __name__ == '__main__':
    main()
