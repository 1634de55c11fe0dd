#!/usr/bin/env python
"""A Kaggle-style tabular classifier: categorical columns through nn.Embedding (one per column,
sized by the usual min(50, (n+1)//2) rule), a continuous column binned with torch.quantile and
torch.bucketize, BatchNorm1d over the continuous block, class weights from
torch.unique(return_counts=True), CrossEntropyLoss with label smoothing, ReduceLROnPlateau on
the validation AUC, early stopping that keeps copy.deepcopy(state_dict()), and a checkpoint dict
(model, optimizer, scheduler) saved to and resumed from an io.BytesIO."""
import argparse
import copy
import io
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class TabularModel(nn.Module):
    def __init__(self, emb_szs, n_cont, out_sz, layers, ps=0.0, emb_drop=0.0):
        super().__init__()
        self.embeds = nn.ModuleList([nn.Embedding(ni, nf) for ni, nf in emb_szs])
        self.emb_drop = nn.Dropout(emb_drop)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        n_emb = sum(e.embedding_dim for e in self.embeds)
        layerlist = []
        n_in = n_emb + n_cont
        for i in layers:
            layerlist.append(nn.Linear(n_in, i))
            layerlist.append(nn.ReLU(inplace=True))
            layerlist.append(nn.BatchNorm1d(i))
            layerlist.append(nn.Dropout(ps))
            n_in = i
        layerlist.append(nn.Linear(layers[-1], out_sz))
        self.layers = nn.Sequential(*layerlist)

    def forward(self, x_cat, x_cont):
        embeddings = [e(x_cat[:, i]) for i, e in enumerate(self.embeds)]
        x = torch.cat(embeddings, 1)
        x = self.emb_drop(x)
        x_cont = self.bn_cont(x_cont)
        x = torch.cat([x, x_cont], 1)
        return self.layers(x)


def roc_auc(scores, labels):
    """Mann-Whitney AUC through ranks (ties averaged), as sklearn computes it."""
    order = torch.argsort(scores)
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    uniq, inverse, counts = torch.unique(scores, return_inverse=True, return_counts=True)
    rank_sum = torch.zeros_like(uniq).index_add_(0, inverse, ranks)
    ranks = (rank_sum / counts)[inverse]
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def make_table(rng, n):
    city = rng.randint(0, 12, size=n)
    device = rng.randint(0, 4, size=n)
    age = rng.uniform(18, 80, size=n)
    income = rng.lognormal(3.0, 0.5, size=n)
    visits = rng.poisson(3.0, size=n).astype(np.float64)
    logit = (0.8 * (city % 3 == 0) - 0.6 * (device == 2) + 0.04 * (age - 45)
             + 0.05 * (income - 20) + 0.3 * np.sqrt(visits) - 1.6)
    y = (rng.rand(n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    cats = np.stack([city, device], 1).astype(np.int64)
    conts = np.stack([age, income, visits], 1).astype(np.float32)
    return torch.from_numpy(cats), torch.from_numpy(conts), torch.from_numpy(y)


def evaluate(model, loader, criterion):
    model.eval()
    losses, scores, targets = [], [], []
    with torch.no_grad():
        for xc, xn, y in loader:
            out = model(xc, xn)
            losses.append(criterion(out, y).item() * len(y))
            scores.append(F.softmax(out, dim=1)[:, 1])
            targets.append(y)
    scores, targets = torch.cat(scores), torch.cat(targets)
    return sum(losses) / len(targets), roc_auc(scores, targets)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=12)
    parser.add_argument('--patience', type=int, default=3)
    parser.add_argument('--dropout', type=float, default=0.0)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(42)
    rng = np.random.RandomState(42)
    cats, conts, y = make_table(rng, 600)

    # bin age into deciles and use it as a third categorical column
    edges = torch.quantile(conts[:, 0], torch.linspace(0, 1, 11)[1:-1])
    age_bin = torch.bucketize(conts[:, 0], edges)
    cats = torch.cat([cats, age_bin.unsqueeze(1)], 1)
    conts[:, 1] = torch.log1p(conts[:, 1])
    cat_szs = [int(cats[:, i].max()) + 1 for i in range(cats.shape[1])]
    emb_szs = [(size, min(50, (size + 1) // 2)) for size in cat_szs]
    print('embedding sizes', emb_szs, 'age bins', torch.bincount(age_bin).tolist())

    n_train = 450
    train_ds = TensorDataset(cats[:n_train], conts[:n_train], y[:n_train])
    val_ds = TensorDataset(cats[n_train:], conts[n_train:], y[n_train:])
    train_loader = DataLoader(train_ds, batch_size=64, shuffle=False, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=128)

    classes, counts = torch.unique(y[:n_train], return_counts=True)
    class_weights = (counts.sum() / (len(classes) * counts.float()))
    print('classes', classes.tolist(), 'counts', counts.tolist(),
          'weights', [round(w, 4) for w in class_weights.tolist()])
    criterion = nn.CrossEntropyLoss(weight=class_weights, label_smoothing=0.05)

    model = TabularModel(emb_szs, conts.shape[1], 2, [32, 16], ps=args.dropout,
                         emb_drop=args.dropout)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode='max', factor=0.5,
                                                           patience=1)

    best_auc, best_state, bad_epochs, checkpoint = -1.0, None, 0, None
    for epoch in range(args.epochs):
        model.train()
        running = 0.0
        for xc, xn, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xc, xn), yb)
            loss.backward()
            optimizer.step()
            running += loss.item()
        val_loss, val_auc = evaluate(model, val_loader, criterion)
        scheduler.step(val_auc)
        print('epoch {:2d} lr {:.5f} train loss {:.5f} val loss {:.5f} val auc {:.4f}'.format(
            epoch, optimizer.param_groups[0]['lr'], running / len(train_loader), val_loss,
            val_auc))
        if val_auc > best_auc + 1e-4:
            best_auc, bad_epochs = val_auc, 0
            best_state = copy.deepcopy(model.state_dict())
            buffer = io.BytesIO()
            torch.save({'epoch': epoch, 'model_state_dict': model.state_dict(),
                        'optimizer_state_dict': optimizer.state_dict(),
                        'scheduler_state_dict': scheduler.state_dict(),
                        'best_auc': best_auc}, buffer)
            checkpoint = buffer.getvalue()
        else:
            bad_epochs += 1
            if bad_epochs >= args.patience:
                print('early stopping at epoch', epoch)
                break

    model.load_state_dict(best_state)
    val_loss, val_auc = evaluate(model, val_loader, criterion)
    print('best val loss {:.5f} auc {:.4f}'.format(val_loss, val_auc))

    # resume from the checkpoint bytes into fresh objects and train one more epoch
    ckpt = torch.load(io.BytesIO(checkpoint), weights_only=True)
    resumed = TabularModel(emb_szs, conts.shape[1], 2, [32, 16])
    resumed.load_state_dict(ckpt['model_state_dict'])
    opt2 = torch.optim.Adam(resumed.parameters(), lr=0.01)
    opt2.load_state_dict(ckpt['optimizer_state_dict'])
    sched2 = torch.optim.lr_scheduler.ReduceLROnPlateau(opt2, mode='max', factor=0.5, patience=1)
    sched2.load_state_dict(ckpt['scheduler_state_dict'])
    print('resumed from epoch', ckpt['epoch'], 'lr', opt2.param_groups[0]['lr'],
          'step', int(opt2.state_dict()['state'][0]['step']))
    resumed.train()
    running = 0.0
    for xc, xn, yb in train_loader:
        opt2.zero_grad()
        loss = criterion(resumed(xc, xn), yb)
        loss.backward()
        opt2.step()
        running += loss.item()
    val_loss, val_auc = evaluate(resumed, val_loader, criterion)
    sched2.step(val_auc)
    print('resumed train loss {:.5f} val loss {:.5f} auc {:.4f}'.format(
        running / len(train_loader), val_loss, val_auc))


if __name__ == '__main__':
    main()
