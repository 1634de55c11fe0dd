"""Metric learning with a siamese embedding net: contrastive loss on cosine similarity /
pairwise distance, and TripletMarginLoss (after common siamese-network tutorials)."""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


def make_clusters(n_per_class, n_classes, dim, seed):
    rng = np.random.RandomState(seed)
    centers = rng.randn(n_classes, dim) * 2.0
    xs = np.concatenate([c + rng.randn(n_per_class, dim) for c in centers]).astype(np.float32)
    ys = np.repeat(np.arange(n_classes), n_per_class)
    return xs, ys


class TripletDataset(Dataset):
    def __init__(self, xs, ys, seed):
        self.xs = torch.from_numpy(xs)
        self.ys = torch.from_numpy(ys)
        self.by_class = {int(c): np.where(ys == c)[0] for c in np.unique(ys)}
        r = random.Random(seed)
        self.triplets = []
        for i in range(len(ys)):
            c = int(ys[i])
            pos = r.choice(list(self.by_class[c]))
            neg_c = r.choice([k for k in self.by_class if k != c])
            neg = r.choice(list(self.by_class[neg_c]))
            self.triplets.append((i, pos, neg))

    def __len__(self):
        return len(self.triplets)

    def __getitem__(self, idx):
        a, p, n = self.triplets[idx]
        return self.xs[a], self.xs[p], self.xs[n]


class EmbeddingNet(nn.Module):
    def __init__(self, dim):
        super(EmbeddingNet, self).__init__()
        self.fc = nn.Sequential(nn.Linear(dim, 32), nn.PReLU(), nn.BatchNorm1d(32),
                                nn.Linear(32, 32), nn.PReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.fc(x)


class SiameseNet(nn.Module):
    def __init__(self, embedding_net):
        super(SiameseNet, self).__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2):
        return self.embedding_net(x1), self.embedding_net(x2)

    def get_embedding(self, x):
        return self.embedding_net(x)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin
        self.eps = 1e-9

    def forward(self, output1, output2, target, size_average=True):
        distances = (output2 - output1).pow(2).sum(1)
        losses = 0.5 * (target.float() * distances +
                        (1 + -1 * target).float() * F.relu(self.margin - (distances + self.eps).sqrt()).pow(2))
        return losses.mean() if size_average else losses.sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--gamma', type=float, default=0.7)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(1)
    random.seed(1)

    xs, ys = make_clusters(24, 4, 10, 0)
    loader = DataLoader(TripletDataset(xs, ys, 0), batch_size=16, shuffle=False)
    model = SiameseNet(EmbeddingNet(10))
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    triplet = nn.TripletMarginLoss(margin=1.0, p=2)
    contrastive = ContrastiveLoss(1.0)
    cos_emb = nn.CosineEmbeddingLoss(margin=0.2)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr * 100)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        model.train()
        for batch_idx, (a, p, n) in enumerate(loader):
            optimizer.zero_grad()
            ea, ep = model(a, p)
            en = model.get_embedding(n)
            same = torch.ones(a.size(0), dtype=torch.long)
            diff = torch.zeros(a.size(0), dtype=torch.long)
            loss = (triplet(ea, ep, en) + contrastive(ea, ep, same) + contrastive(ea, en, diff)
                    + cos_emb(ea, en, -torch.ones(a.size(0))))
            loss.backward()
            optimizer.step()
            if batch_idx % 2 == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(a), len(loader.dataset), loss.item()))
        scheduler.step()
        model.eval()
        with torch.no_grad():
            emb = model.get_embedding(torch.from_numpy(xs))
            y = torch.from_numpy(ys)
            sim = F.cosine_similarity(emb.unsqueeze(1), emb.unsqueeze(0), dim=-1)
            d = torch.cdist(emb, emb)
            same = y.unsqueeze(0) == y.unsqueeze(1)
            print('epoch {} mean cos same {:.5f} diff {:.5f}'.format(
                epoch, sim[same].mean().item(), sim[~same].mean().item()))
            pd = F.pairwise_distance(emb[:-1], emb[1:])
            print('epoch {} pairwise {:.5f} cdist {:.5f}'.format(epoch, pd.mean().item(), d.mean().item()))
            d.fill_diagonal_(float('inf'))
            nearest = d.argmin(dim=1)
            acc = (y[nearest] == y).float().mean().item()
            print('epoch {} 1-NN accuracy {:.4f}'.format(epoch, acc))


if __name__ == '__main__':
    main()
