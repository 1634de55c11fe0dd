#!/usr/bin/env python
"""A fast neural style transfer network (after pytorch/examples fast_neural_style):
TransformerNet with ReflectionPad2d, InstanceNorm2d(affine=True), residual blocks and
nearest-neighbour upsampling, trained against a frozen feature extractor with a content loss,
a Gram-matrix style loss and a total-variation term; features collected with forward hooks
and a namedtuple output as the repository's Vgg16."""
import argparse
import os
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn


class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = torch.nn.InstanceNorm2d(channels, affine=True)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        reflection_padding = kernel_size // 2
        self.reflection_pad = torch.nn.ReflectionPad2d(reflection_padding)
        self.conv2d = torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = torch.nn.functional.interpolate(x_in, mode='nearest', scale_factor=self.upsample)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class TransformerNet(torch.nn.Module):
    def __init__(self, c=8):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, c, kernel_size=5, stride=1)
        self.in1 = torch.nn.InstanceNorm2d(c, affine=True)
        self.conv2 = ConvLayer(c, 2 * c, kernel_size=3, stride=2)
        self.in2 = torch.nn.InstanceNorm2d(2 * c, affine=True)
        self.res1 = ResidualBlock(2 * c)
        self.res2 = ResidualBlock(2 * c)
        self.deconv1 = UpsampleConvLayer(2 * c, c, kernel_size=3, stride=1, upsample=2)
        self.in4 = torch.nn.InstanceNorm2d(c, affine=True)
        self.up = nn.Upsample(scale_factor=1, mode='nearest')
        self.deconv3 = ConvLayer(c, 3, kernel_size=5, stride=1)
        self.relu = torch.nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.deconv3(self.up(y))
        return y


class FeatureNet(torch.nn.Module):
    """A small frozen VGG-like feature extractor whose slices' outputs come back as a
    namedtuple, read by forward hooks."""

    def __init__(self, requires_grad=False):
        super(FeatureNet, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
            nn.AvgPool2d(2, 2),
            nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True))
        self._taps = {}
        for name, idx in (('relu1_2', 3), ('relu2_1', 6), ('relu3_1', 9)):
            self.features[idx].register_forward_hook(self._hook(name))
        if not requires_grad:
            for param in self.parameters():
                param.requires_grad = False

    def _hook(self, name):
        def hook(module, inputs, output):
            self._taps[name] = output
        return hook

    def forward(self, X):
        self.features(X)
        vgg_outputs = namedtuple("VggOutputs", ['relu1_2', 'relu2_1', 'relu3_1'])
        return vgg_outputs(self._taps['relu1_2'], self._taps['relu2_1'], self._taps['relu3_1'])


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)
    return (batch - mean) / std


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=8)
    parser.add_argument('--content-weight', type=float, default=1e5)
    parser.add_argument('--style-weight', type=float, default=1e10)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    transformer = TransformerNet()
    vgg = FeatureNet(requires_grad=False)
    if args.init:
        both = nn.ModuleDict({'transformer': transformer, 'vgg': vgg})
        if os.path.exists(args.init):
            both.load_state_dict(torch.load(args.init))
        else:
            torch.save(both.state_dict(), args.init)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    mse_loss = torch.nn.MSELoss()

    yy, xx = np.mgrid[0:24, 0:24]
    style = np.stack([127 + 120 * np.sin(xx / 2.0), 127 + 120 * np.cos(yy / 3.0),
                      127 + 120 * np.sin((xx + yy) / 4.0)]).astype(np.float32)
    style = torch.from_numpy(style).repeat(4, 1, 1, 1)
    features_style = vgg(normalize_batch(style))
    gram_style = [gram_matrix(y) for y in features_style]

    images = torch.from_numpy((rng.rand(8, 3, 24, 24) * 255).astype(np.float32))
    for step in range(args.steps):
        transformer.train()
        x = images[(step % 2) * 4:(step % 2) * 4 + 4].clone()
        n_batch = len(x)
        optimizer.zero_grad()
        y = transformer(x)
        y = normalize_batch(y)
        x = normalize_batch(x)
        features_y = vgg(y)
        features_x = vgg(x)
        content_loss = args.content_weight * mse_loss(features_y.relu2_1, features_x.relu2_1)
        style_loss = 0.
        for ft_y, gm_s in zip(features_y, gram_style):
            gm_y = gram_matrix(ft_y)
            style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
        style_loss *= args.style_weight
        tv_loss = (torch.sum(torch.abs(y[:, :, :, :-1] - y[:, :, :, 1:])) +
                   torch.sum(torch.abs(y[:, :, :-1, :] - y[:, :, 1:, :])))
        total_loss = content_loss + style_loss + 1e-2 * tv_loss
        total_loss.backward()
        optimizer.step()
        print('step {}\tcontent loss: {:.6f}\tstyle loss: {:.6f}\ttotal loss: {:.6f}'.format(
            step, content_loss.item() / 1e5, style_loss.item() / 1e5, total_loss.item() / 1e5))
    transformer.eval()
    with torch.no_grad():
        output = transformer(images[:1]).clamp(0, 255)
    img = output[0].clone().clamp(0, 255).numpy()
    img = img.transpose(1, 2, 0).astype("uint8")
    print('stylized image', img.shape, img.dtype)


if __name__ == '__main__':
    main()
