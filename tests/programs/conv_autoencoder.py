#!/usr/bin/env python
"""A convolutional autoencoder on MNIST digits (Conv2d down, ConvTranspose2d up, Sigmoid)
with TensorDataset + random_split, a shuffled DataLoader, ReduceLROnPlateau on the
validation loss, and early stopping by patience."""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def load_mnist_images(path, n):
    with gzip.open(path, 'rb') as f:
        data = np.frombuffer(f.read(), np.uint8, offset=16)
    return data.reshape(-1, 1, 28, 28)[:n]


class Autoencoder(nn.Module):
    def __init__(self):
        super(Autoencoder, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),  # 14x14
            nn.ReLU(True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),  # 7x7
            nn.ReLU(True),
            nn.Conv2d(16, 32, 7),  # 1x1
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(32, 16, 7),
            nn.ReLU(True),
            nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', type=str, required=True)
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(42)
    images = load_mnist_images(os.path.join(args.data, 'train-images-idx3-ubyte.gz'), 640)
    x = torch.tensor(images, dtype=torch.float32) / 255.
    dataset = TensorDataset(x, x.clone())
    train_set, val_set = random_split(dataset, [0.8, 0.2],
                                      generator=torch.Generator().manual_seed(42))
    print('split', len(train_set), len(val_set))
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=128)

    model = Autoencoder()
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='min', factor=0.5,
                                                           patience=0, threshold=1e-3)
    best, bad, patience = float('inf'), 0, 3
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for img, target in train_loader:
            recon = model(img)
            loss = criterion(recon, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * img.size(0)
        model.eval()
        with torch.no_grad():
            val_loss = sum(nn.functional.mse_loss(model(img), t, reduction='sum').item()
                           for img, t in val_loader) / (len(val_set) * 28 * 28)
        scheduler.step(val_loss)
        print('epoch [{}/{}], train loss: {:.6f}, val loss: {:.6f}, lr {}'.format(
            epoch + 1, args.epochs, running / len(train_set), val_loss,
            scheduler.get_last_lr()[0]))
        if val_loss < best:
            best, bad = val_loss, 0
            torch.save(model.state_dict(), 'best_autoencoder.pt')
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(torch.load('best_autoencoder.pt', weights_only=True))
    with torch.no_grad():
        codes = model.encoder(x[:8])
        print('code shape', tuple(codes.shape), 'best val loss: {:.6f}'.format(best))


if __name__ == '__main__':
    main()
