#!/usr/bin/env python
"""A VQ-VAE (after the Zalando / DeepMind Sonnet-port notebook "vq-vae.ipynb" and
rosinality/vq-vae-2-pytorch): a strided conv encoder, residual stacks, a vector quantizer that
finds nearest codes with the expanded squared distance and with torch.cdist, a straight-through
estimator (x + (q - x).detach()), commitment loss, an EMA codebook updated in place under no_grad
with Laplace smoothing, perplexity from one-hot encodings (scatter_), and a ConvTranspose2d
decoder; Adam with amsgrad."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost):
        super().__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.uniform_(-1 / self._num_embeddings, 1 / self._num_embeddings)
        self._commitment_cost = commitment_cost

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()  # BCHW -> BHWC
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)
        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings,
                                device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        q_latent_loss = F.mse_loss(quantized, inputs.detach())
        loss = q_latent_loss + self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class VectorQuantizerEMA(nn.Module):
    def __init__(self, num_embeddings, embedding_dim, commitment_cost, decay, epsilon=1e-5):
        super().__init__()
        self._embedding_dim = embedding_dim
        self._num_embeddings = num_embeddings
        self._embedding = nn.Embedding(self._num_embeddings, self._embedding_dim)
        self._embedding.weight.data.normal_()
        self._commitment_cost = commitment_cost
        self.register_buffer('_ema_cluster_size', torch.zeros(num_embeddings))
        self._ema_w = nn.Parameter(torch.Tensor(num_embeddings, self._embedding_dim))
        self._ema_w.data.normal_()
        self._decay = decay
        self._epsilon = epsilon

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)
        distances = torch.cdist(flat_input, self._embedding.weight) ** 2
        encoding_indices = torch.argmin(distances, dim=1)
        encodings = F.one_hot(encoding_indices, self._num_embeddings).type(flat_input.dtype)
        quantized = F.embedding(encoding_indices, self._embedding.weight).view(input_shape)
        if self.training:
            with torch.no_grad():
                self._ema_cluster_size.mul_(self._decay).add_(torch.sum(encodings, 0),
                                                              alpha=1 - self._decay)
                n = torch.sum(self._ema_cluster_size.data)
                self._ema_cluster_size = ((self._ema_cluster_size + self._epsilon)
                                          / (n + self._num_embeddings * self._epsilon) * n)
                dw = torch.matmul(encodings.t(), flat_input)
                self._ema_w = nn.Parameter(self._ema_w * self._decay + (1 - self._decay) * dw)
                self._embedding.weight = nn.Parameter(
                    self._ema_w / self._ema_cluster_size.unsqueeze(1))
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        loss = self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class Residual(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_hiddens):
        super().__init__()
        self._block = nn.Sequential(
            nn.ReLU(True),
            nn.Conv2d(in_channels, num_residual_hiddens, kernel_size=3, stride=1, padding=1,
                      bias=False),
            nn.ReLU(True),
            nn.Conv2d(num_residual_hiddens, num_hiddens, kernel_size=1, stride=1, bias=False))

    def forward(self, x):
        return x + self._block(x)


class ResidualStack(nn.Module):
    def __init__(self, in_channels, num_hiddens, num_residual_layers, num_residual_hiddens):
        super().__init__()
        self._layers = nn.ModuleList([Residual(in_channels, num_hiddens, num_residual_hiddens)
                                      for _ in range(num_residual_layers)])

    def forward(self, x):
        for layer in self._layers:
            x = layer(x)
        return F.relu(x)


class Model(nn.Module):
    def __init__(self, num_hiddens=16, num_residual_layers=1, num_residual_hiddens=8,
                 num_embeddings=16, embedding_dim=4, commitment_cost=0.25, decay=0.0):
        super().__init__()
        self._encoder = nn.Sequential(
            nn.Conv2d(1, num_hiddens // 2, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(num_hiddens // 2, num_hiddens, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(num_hiddens, num_hiddens, 3, stride=1, padding=1),
            ResidualStack(num_hiddens, num_hiddens, num_residual_layers, num_residual_hiddens))
        self._pre_vq_conv = nn.Conv2d(num_hiddens, embedding_dim, kernel_size=1, stride=1)
        if decay > 0.0:
            self._vq_vae = VectorQuantizerEMA(num_embeddings, embedding_dim, commitment_cost,
                                              decay)
        else:
            self._vq_vae = VectorQuantizer(num_embeddings, embedding_dim, commitment_cost)
        self._decoder = nn.Sequential(
            nn.Conv2d(embedding_dim, num_hiddens, 3, stride=1, padding=1),
            ResidualStack(num_hiddens, num_hiddens, num_residual_layers, num_residual_hiddens),
            nn.ConvTranspose2d(num_hiddens, num_hiddens // 2, 4, stride=2, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(num_hiddens // 2, 1, 4, stride=2, padding=1))

    def forward(self, x):
        z = self._pre_vq_conv(self._encoder(x))
        loss, quantized, perplexity, _ = self._vq_vae(z)
        return loss, self._decoder(quantized), perplexity


def make_images(rng, n, size=16):
    yy, xx = np.mgrid[0:size, 0:size] / (size - 1.0)
    imgs = np.empty((n, 1, size, size), dtype=np.float32)
    for i in range(n):
        fx, fy, ph = rng.uniform(1, 3), rng.uniform(1, 3), rng.uniform(0, np.pi)
        imgs[i, 0] = 0.5 + 0.5 * np.sin(2 * np.pi * (fx * xx + fy * yy) + ph)
    return torch.from_numpy(imgs - 0.5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--decay', type=float, default=0.0)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    data = make_images(rng, 256)
    data_variance = torch.var(data).item()
    model = Model(decay=args.decay)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3, amsgrad=True)
    model.train()
    recon_hist, perp_hist = [], []
    for step in range(args.steps):
        idx = rng.choice(len(data), 32, replace=False)
        x = data[torch.from_numpy(idx)]
        optimizer.zero_grad()
        vq_loss, data_recon, perplexity = model(x)
        recon_error = F.mse_loss(data_recon, x) / data_variance
        loss = recon_error + vq_loss
        loss.backward()
        optimizer.step()
        recon_hist.append(recon_error.item())
        perp_hist.append(perplexity.item())
        if step % 10 == 9:
            print('step {} recon loss {:.5f} vq loss {:.5f} perplexity {:.3f}'.format(
                step, np.mean(recon_hist[-10:]), vq_loss.item(), np.mean(perp_hist[-10:])))
    model.eval()
    with torch.no_grad():
        vq_loss, recon, perplexity = model(data[:64])
        codes = model._vq_vae(model._pre_vq_conv(model._encoder(data[:64])))[3].argmax(1)
        used, counts = torch.unique(codes, return_counts=True)
    print('eval loss {:.5f} perplexity {:.3f} codes used {}'.format(
        (F.mse_loss(recon, data[:64]) / data_variance).item(), perplexity.item(), len(used)))


if __name__ == '__main__':
    main()
