#!/usr/bin/env python
"""Stochastic weight averaging and an exponential moving average of the weights with
torch.optim.swa_utils (AveragedModel, get_ema_multi_avg_fn, SWALR, update_bn) on an MLP with
BatchNorm1d, after the SWA tutorial: CosineAnnealingLR first, then SWALR while averaging."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, SWALR, get_ema_multi_avg_fn, update_bn
from torch.utils.data import DataLoader, TensorDataset


def make_model():
    return nn.Sequential(nn.Linear(8, 32), nn.BatchNorm1d(32), nn.ReLU(),
                         nn.Linear(32, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 1))


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        return F.mse_loss(model(x), y).item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=8)
    parser.add_argument('--swa-start', type=int, default=4)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    w = rng.randn(8, 1)
    xs = rng.randn(256, 8).astype(np.float32)
    ys = (np.sin(xs @ w) + 0.1 * rng.randn(256, 1)).astype(np.float32)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    xv, yv = x[192:], y[192:]
    loader = DataLoader(TensorDataset(x[:192], y[:192]), batch_size=32)

    model = make_model()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    swa_model = AveragedModel(model)
    ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.swa_start)
    swa_scheduler = SWALR(optimizer, swa_lr=0.02, anneal_epochs=2, anneal_strategy='cos')
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
            ema_model.update_parameters(model)
            total += loss.item()
        if epoch >= args.swa_start:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
        print('epoch {} lr {:.5f} train loss: {:.6f} val loss: {:.6f}'.format(
            epoch, optimizer.param_groups[0]['lr'], total / len(loader), evaluate(model, xv, yv)))
    print('averaged', int(swa_model.n_averaged), 'ema', int(ema_model.n_averaged))
    update_bn(loader, swa_model)
    update_bn(loader, ema_model)
    print('swa val loss: {:.6f}'.format(evaluate(swa_model, xv, yv)))
    print('ema val loss: {:.6f}'.format(evaluate(ema_model, xv, yv)))
    print(sorted(swa_model.state_dict().keys())[:4])
    bn = swa_model.module[1]
    print('swa bn running_var mean {:.6f} momentum {}'.format(bn.running_var.mean().item(), bn.momentum))


if __name__ == '__main__':
    main()
