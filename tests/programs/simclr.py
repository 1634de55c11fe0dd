#!/usr/bin/env python
"""SimCLR-style contrastive pretraining (after sthalles/SimCLR and the UvA deep-learning
tutorial): two augmented views, an NT-Xent loss built from F.normalize, z @ z.T, a
torch.eye bool mask filled with -inf and CrossEntropyLoss over the positive's index; a
MarginRankingLoss and a TripletMarginWithDistanceLoss (cosine distance) beside it; then a
weighted kNN classifier on the frozen features (topk, one_hot, exp(sim / T)) and a linear probe
on a frozen encoder with CosineAnnealingWarmRestarts."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, hidden_dim=32, out_dim=16):
        super().__init__()
        self.convnet = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.projection = nn.Sequential(nn.Linear(16, hidden_dim), nn.ReLU(inplace=True),
                                        nn.Linear(hidden_dim, out_dim))

    def forward(self, x):
        h = self.convnet(x)
        return h, self.projection(h)


def info_nce_loss(feats, temperature):
    # Calculate cosine similarity
    cos_sim = F.cosine_similarity(feats[:, None, :], feats[None, :, :], dim=-1)
    # Mask out cosine similarity to itself
    self_mask = torch.eye(cos_sim.shape[0], dtype=torch.bool, device=cos_sim.device)
    cos_sim.masked_fill_(self_mask, -9e15)
    # Find positive example -> batch_size//2 away from the original example
    pos_mask = self_mask.roll(shifts=cos_sim.shape[0] // 2, dims=0)
    cos_sim = cos_sim / temperature
    nll = -cos_sim[pos_mask] + torch.logsumexp(cos_sim, dim=-1)
    nll = nll.mean()
    # ranking of the positive among all pairs
    comb_sim = torch.cat([cos_sim[pos_mask][:, None], cos_sim.masked_fill(pos_mask, -9e15)],
                         dim=-1)
    sim_argsort = comb_sim.argsort(dim=-1, descending=True).argmin(dim=-1)
    return nll, (sim_argsort == 0).float().mean(), (sim_argsort < 5).float().mean()


def nt_xent(z1, z2, temperature):
    """The sthalles/SimCLR formulation: labels point at the positive column."""
    batch_size = z1.shape[0]
    features = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    labels = torch.cat([torch.arange(batch_size) for _ in range(2)], dim=0)
    labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
    similarity_matrix = torch.matmul(features, features.T)
    mask = torch.eye(labels.shape[0], dtype=torch.bool)
    labels = labels[~mask].view(labels.shape[0], -1)
    similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)
    positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)
    negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)
    logits = torch.cat([positives, negatives], dim=1) / temperature
    labels = torch.zeros(logits.shape[0], dtype=torch.long)
    return nn.CrossEntropyLoss()(logits, labels)


def augment(x, rng):
    """Random shifts, flips and noise, drawn from NumPy."""
    out = np.empty_like(x)
    for i in range(len(x)):
        img = np.roll(x[i], shift=(rng.randint(-2, 3), rng.randint(-2, 3)), axis=(1, 2))
        if rng.rand() < 0.5:
            img = img[:, :, ::-1]
        out[i] = img * rng.uniform(0.7, 1.3) + 0.15 * rng.randn(*img.shape)
    return torch.from_numpy(out.astype(np.float32))


def make_images(rng, n, size=12):
    """Four classes of strokes: horizontal, vertical, diagonal and a ring."""
    yy, xx = np.mgrid[0:size, 0:size]
    labels = rng.randint(0, 4, size=n)
    images = np.zeros((n, 1, size, size), dtype=np.float32)
    for i, c in enumerate(labels):
        o = rng.randint(3, size - 3)
        if c == 0:
            images[i, 0, o - 1:o + 1, 2:-2] = 1
        elif c == 1:
            images[i, 0, 2:-2, o - 1:o + 1] = 1
        elif c == 2:
            images[i, 0][np.abs(yy - xx - (o - size // 2)) <= 1] = 1
        else:
            r = np.sqrt((yy - size / 2) ** 2 + (xx - size / 2) ** 2)
            images[i, 0][np.abs(r - rng.uniform(2.5, 4.5)) < 0.8] = 1
    return images, torch.from_numpy(labels).long()


@torch.no_grad()
def knn_predict(feature, feature_bank, feature_labels, classes, knn_k, knn_t):
    sim_matrix = torch.mm(feature, feature_bank)
    sim_weight, sim_indices = sim_matrix.topk(k=knn_k, dim=-1)
    sim_labels = torch.gather(feature_labels.expand(feature.size(0), -1), dim=-1,
                              index=sim_indices)
    sim_weight = (sim_weight / knn_t).exp()
    one_hot_label = F.one_hot(sim_labels, num_classes=classes).float()
    pred_scores = torch.sum(one_hot_label * sim_weight.unsqueeze(dim=-1), dim=1)
    return pred_scores.argsort(dim=-1, descending=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--temperature', type=float, default=0.5)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    images_np, labels = make_images(rng, 192)
    test_images_np, test_labels = make_images(rng, 64)
    images, test_images = torch.from_numpy(images_np), torch.from_numpy(test_images_np)

    model = Encoder()
    probe = nn.Linear(16, 4)
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            model.load_state_dict(state['model'])
            probe.load_state_dict(state['probe'])
        else:
            torch.save({'model': model.state_dict(), 'probe': probe.state_dict()}, args.init)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * 6,
                                                           eta_min=3e-5)
    ranking = nn.MarginRankingLoss(margin=0.2)
    triplet = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.5)
    batch_size = 32
    for epoch in range(args.epochs):
        model.train()
        totals = np.zeros(5)
        for start in range(0, len(images), batch_size):
            x = images_np[start:start + batch_size]
            v1, v2 = augment(x, rng), augment(x, rng)
            _, z = model(torch.cat([v1, v2], dim=0))
            z1, z2 = z.chunk(2, dim=0)
            loss_a, top1, top5 = info_nce_loss(z, args.temperature)
            loss_b = nt_xent(z1, z2, args.temperature)
            # a positive pair must score above a shuffled (negative) pair by the margin
            neg = torch.roll(z2, shifts=1, dims=0)
            pos_sim = F.cosine_similarity(z1, z2)
            neg_sim = F.cosine_similarity(z1, neg)
            loss_r = ranking(pos_sim, neg_sim, torch.ones_like(pos_sim))
            loss_t = triplet(z1, z2, neg)
            loss = loss_a + 0.1 * (loss_r + loss_t)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            totals += [loss.item(), loss_b.item(), loss_r.item(), top1.item(), top5.item()]
        totals /= len(images) // batch_size
        print('epoch {} lr {:.5f} loss {:.5f} nt_xent loss {:.5f} ranking loss {:.5f} '
              'top1 {:.3f} top5 {:.3f}'.format(epoch, scheduler.get_last_lr()[0], *totals))
        assert abs(totals[0] - totals[1]) < 1.0  # the two formulations are close

    # kNN monitor on normalised backbone features
    model.eval()
    with torch.no_grad():
        bank = F.normalize(model(images)[0], dim=1).t().contiguous()
        feats = F.normalize(model(test_images)[0], dim=1)
        pred = knn_predict(feats, bank, labels, 4, knn_k=10, knn_t=0.1)
        knn_acc = (pred[:, 0] == test_labels).float().mean().item()
        dists = torch.cdist(feats, bank.t())
        nn_idx = dists.argmin(dim=1)
        nn_acc = (labels[nn_idx] == test_labels).float().mean().item()
    print('knn accuracy {:.3f} 1-nn accuracy {:.3f}'.format(knn_acc, nn_acc))

    # linear probe on the frozen backbone
    for p in model.parameters():
        p.requires_grad_(False)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable == []
    probe_opt = torch.optim.SGD(probe.parameters(), lr=0.5, momentum=0.9)
    probe_sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(probe_opt, T_0=5,
                                                                       T_mult=2)
    with torch.no_grad():
        train_feats = model(images)[0]
        test_feats = model(test_images)[0]
    for it in range(15):
        probe_opt.zero_grad()
        loss = F.cross_entropy(probe(train_feats), labels)
        loss.backward()
        probe_opt.step()
        probe_sched.step(it + 1)
        if it % 5 == 4:
            acc = (probe(test_feats).argmax(1) == test_labels).float().mean().item()
            print('probe it {} lr {:.4f} loss {:.5f} test acc {:.3f}'.format(
                it, probe_opt.param_groups[0]['lr'], loss.item(), acc))


if __name__ == '__main__':
    main()
