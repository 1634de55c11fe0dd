#!/usr/bin/env python
"""A small U-Net (after milesial/Pytorch-UNet) segmenting synthetic discs and squares:
DoubleConv blocks, MaxPool2d down, ConvTranspose2d or bilinear F.interpolate (align_corners)
up, F.pad to fix odd sizes, torch.cat skip connections, BCEWithLogitsLoss with pos_weight
plus a soft Dice loss, Nesterov SGD with a StepLR, and IoU / Dice scores in evaluation."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels, bilinear=True):
        super().__init__()
        self.bilinear = bilinear
        if bilinear:
            self.conv = DoubleConv(in_channels, out_channels, in_channels // 2)
        else:
            self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
            self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        if self.bilinear:
            x1 = F.interpolate(x1, scale_factor=2, mode='bilinear', align_corners=True)
        else:
            x1 = self.up(x1)
        # input is CHW
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, bilinear=False, base=8):
        super().__init__()
        factor = 2 if bilinear else 1
        self.inc = DoubleConv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        self.down3 = Down(base * 4, base * 8 // factor)
        self.up1 = Up(base * 8, base * 4 // factor, bilinear)
        self.up2 = Up(base * 4, base * 2 // factor, bilinear)
        self.up3 = Up(base * 2, base, bilinear)
        self.outc = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x4 = self.down3(x3)
        x = self.up1(x4, x3)
        x = self.up2(x, x2)
        x = self.up3(x, x1)
        return self.outc(x)


def dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    assert input.size() == target.size()
    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def dice_loss(input, target):
    return 1 - dice_coeff(input, target, reduce_batch_first=True)


def make_shapes(rng, n, size):
    """Images of noisy discs and squares; the mask marks the discs only."""
    yy, xx = np.mgrid[0:size, 0:size]
    images = np.zeros((n, 1, size, size), dtype=np.float32)
    masks = np.zeros((n, 1, size, size), dtype=np.float32)
    for i in range(n):
        for _ in range(rng.randint(1, 3)):
            cy, cx, r = rng.randint(4, size - 4), rng.randint(4, size - 4), rng.randint(2, 5)
            disc = (yy - cy) ** 2 + (xx - cx) ** 2 <= r * r
            images[i, 0][disc] = 1.0
            masks[i, 0][disc] = 1.0
        cy, cx, r = rng.randint(3, size - 3), rng.randint(3, size - 3), rng.randint(2, 4)
        square = (np.abs(yy - cy) <= r) & (np.abs(xx - cx) <= r)
        images[i, 0][square] = 1.0
    images += 0.3 * rng.randn(*images.shape).astype(np.float32)
    return torch.from_numpy(images), torch.from_numpy(masks)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--bilinear', action='store_true')
    parser.add_argument('--size', type=int, default=20)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    images, masks = make_shapes(rng, 48, args.size)
    val_images, val_masks = make_shapes(rng, 16, args.size)

    model = UNet(n_channels=1, n_classes=1, bilinear=args.bilinear)
    model = model.to(memory_format=torch.channels_last)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)

    # SGD rather than the repository's RMSprop: RMSprop divides each gradient by its own
    # magnitude, so the ~1e-8 gradients of the convolutions feeding BatchNorm get full-size
    # steps and float rounding alone decides them
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=1e-8,
                                momentum=0.9, nesterov=True, foreach=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    pos_weight = (1 - masks.mean()) / masks.mean()
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight.reshape(1))
    print('pos_weight {:.4f}'.format(pos_weight.item()))

    batch_size = 8
    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0.0
        for start in range(0, len(images), batch_size):
            x = images[start:start + batch_size].to(memory_format=torch.channels_last)
            y = masks[start:start + batch_size]
            masks_pred = model(x)
            loss = criterion(masks_pred, y)
            loss = loss + dice_loss(torch.sigmoid(masks_pred.squeeze(1)), y.squeeze(1).float())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss.item()
        scheduler.step()

        model.eval()
        with torch.no_grad():
            logits = model(val_images)
            val_loss = criterion(logits, val_masks).item()
            pred = (torch.sigmoid(logits) > 0.5).float()
            dice = dice_coeff(pred, val_masks, reduce_batch_first=False).item()
            inter = (pred.bool() & val_masks.bool()).sum((1, 2, 3))
            union = (pred.bool() | val_masks.bool()).sum((1, 2, 3))
            iou = (inter.float() / union.clamp(min=1).float()).mean().item()
        print('epoch {} train loss {:.5f} val loss {:.5f} dice {:.3f} iou {:.3f}'.format(
            epoch, epoch_loss / (len(images) // batch_size), val_loss, dice, iou))


if __name__ == '__main__':
    main()
