#!/usr/bin/env python
"""A small ResNet (BasicBlock, BatchNorm2d, shortcut projections, AdaptiveAvgPool2d, Kaiming
init, zero-init of the last BN in each block) trained with SGD momentum + Nesterov, weight
decay and MultiStepLR on synthetic CIFAR-like images, with the torchvision-style data
normalisation and an eval pass using running statistics."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(BasicBlock, self).__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=10, zero_init_residual=True, width=8):
        super(ResNet, self).__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, width * 2, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 * block.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, BasicBlock):
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def make_images(rng, n):
    y = rng.randint(0, 10, size=n)
    x = rng.rand(n, 16, 16, 3).astype(np.float32) * 0.5
    for i, c in enumerate(y):  # a class-dependent colour blob
        x[i, 2 + c // 2:8 + c // 2, 4:10, c % 3] += 0.5
    return (x * 255).astype(np.uint8), y


def main():
    parser = argparse.ArgumentParser(description='ResNet on synthetic images')
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--lr', type=float, default=0.1)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    xtr, ytr = make_images(rng, 128)
    xte, yte = make_images(rng, 64)
    mean = torch.tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1)
    std = torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1)

    def to_tensor(x):  # HWC uint8 -> CHW float, normalised as transforms.Normalize
        return (torch.from_numpy(x).permute(0, 3, 1, 2).float().div(255) - mean) / std

    train_loader = DataLoader(TensorDataset(to_tensor(xtr), torch.from_numpy(ytr)), batch_size=32,
                              shuffle=False, drop_last=True)
    test_loader = DataLoader(TensorDataset(to_tensor(xte), torch.from_numpy(yte)), batch_size=64)

    model = ResNet(BasicBlock, [1, 1])
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9, weight_decay=5e-4,
                                nesterov=True)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 3], gamma=0.1)
    for epoch in range(args.epochs):
        model.train()
        for i, (images, target) in enumerate(train_loader):
            output = model(images)
            loss = criterion(output, target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            acc1 = (output.argmax(1) == target).float().mean() * 100
            print('Epoch [{}][{}] lr {:.4f} loss: {:.6f} acc@1 {:.2f}'.format(
                epoch, i, optimizer.param_groups[0]['lr'], loss.item(), acc1.item()))
        scheduler.step()
        model.eval()
        with torch.no_grad():
            total, correct, tl = 0, 0, 0.0
            for images, target in test_loader:
                output = model(images)
                tl += criterion(output, target).item() * images.size(0)
                correct += output.argmax(dim=1).eq(target).sum().item()
                total += images.size(0)
        print(' * test loss: {:.6f} Acc@1 {:.3f}'.format(tl / total, 100.0 * correct / total))
    print('running_mean of bn1:', model.bn1.running_mean[:3].tolist(),
          'batches tracked', int(model.bn1.num_batches_tracked))


if __name__ == '__main__':
    main()
