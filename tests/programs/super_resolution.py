"""Sub-pixel convolution super-resolution (after pytorch/examples/super_resolution)."""
from __future__ import print_function

import argparse
import os
from math import log10

import numpy as np
import torch
import torch.nn as nn
import torch.nn.init as init
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, Dataset


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv4.weight)


class SyntheticImages(Dataset):
    """Smooth random images; the input is the target downsampled by average pooling."""

    def __init__(self, n, size, factor, seed):
        rng = np.random.RandomState(seed)
        yy, xx = np.meshgrid(np.linspace(0, 1, size), np.linspace(0, 1, size), indexing='ij')
        imgs = []
        for _ in range(n):
            a, b, c, d = rng.uniform(1, 6, 4)
            imgs.append(0.5 + 0.25 * np.sin(a * xx + b * yy) * np.cos(c * xx - d * yy))
        self.targets = torch.tensor(np.stack(imgs)[:, None], dtype=torch.float32)
        self.inputs = F.avg_pool2d(self.targets, factor)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, index):
        return self.inputs[index], self.targets[index]


def main():
    parser = argparse.ArgumentParser(description='PyTorch Super Res Example')
    parser.add_argument('--upscale_factor', type=int, default=2)
    parser.add_argument('--batchSize', type=int, default=8)
    parser.add_argument('--nEpochs', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--seed', type=int, default=123)
    parser.add_argument('--init', type=str, default='')
    opt = parser.parse_args()
    print(opt)

    torch.manual_seed(opt.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = SyntheticImages(32, 16, opt.upscale_factor, 0)
    test_set = SyntheticImages(8, 16, opt.upscale_factor, 1)
    training_data_loader = DataLoader(dataset=train_set, num_workers=0, batch_size=opt.batchSize, shuffle=False)
    testing_data_loader = DataLoader(dataset=test_set, num_workers=0, batch_size=4, shuffle=False)

    model = Net(upscale_factor=opt.upscale_factor).to(device)
    if opt.init:
        if os.path.exists(opt.init):
            model.load_state_dict(torch.load(opt.init))
        else:
            torch.save(model.state_dict(), opt.init)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=opt.lr)

    for epoch in range(1, opt.nEpochs + 1):
        epoch_loss = 0
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0].to(device), batch[1].to(device)
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            epoch_loss += loss.item()
            loss.backward()
            optimizer.step()
            print("===> Epoch[{}]({}/{}): Loss: {:.6f}".format(epoch, iteration, len(training_data_loader), loss.item()))
        print("===> Epoch {} Complete: Avg. Loss: {:.6f}".format(epoch, epoch_loss / len(training_data_loader)))

        avg_psnr = 0
        with torch.no_grad():
            for batch in testing_data_loader:
                input, target = batch[0].to(device), batch[1].to(device)
                prediction = model(input)
                mse = criterion(prediction, target)
                psnr = 10 * log10(1 / mse.item())
                avg_psnr += psnr
        print("===> Avg. PSNR: {:.4f} dB".format(avg_psnr / len(testing_data_loader)))
        torch.save(model, "model_epoch_{}.pth".format(epoch))
    loaded = torch.load("model_epoch_{}.pth".format(opt.nEpochs), weights_only=False)
    print("reloaded model loss: {:.6f}".format(criterion(loaded(test_set.inputs), test_set.targets).item()))


if __name__ == "__main__":
    main()
