#!/usr/bin/env python
"""Graph classification with message passing written the PyTorch Geometric way, in plain torch:
edge_index tensors, graphs batched by offsetting node ids (cumsum, repeat_interleave), degrees
from torch.bincount, a GCN layer through a torch.sparse_coo_tensor and torch.sparse.mm (or, with --adj dense, a dense
matrix built by index_put_ with accumulate), a GIN
layer through index_add_, a max aggregation through scatter_reduce('amax', include_self=False),
attention-weighted readout with a scatter softmax, and global mean / max pooling."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter_softmax(src, index, num_segments):
    max_per = torch.full((num_segments,), float('-inf')).scatter_reduce(
        0, index, src, reduce='amax', include_self=True)
    ex = torch.exp(src - max_per[index])
    denom = torch.zeros(num_segments).index_add_(0, index, ex)
    return ex / denom[index]


def gcn_norm(edge_index, num_nodes, sparse=True):
    loops = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    edge_index = torch.cat([edge_index, loops], dim=1)
    row, col = edge_index
    deg = torch.bincount(col, minlength=num_nodes).float()
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    values = deg_inv_sqrt[row] * deg_inv_sqrt[col]
    if not sparse:  # the same matrix, dense (duplicate edges summed as coalesce() does)
        return torch.zeros(num_nodes, num_nodes).index_put_((col, row), values, accumulate=True)
    return torch.sparse_coo_tensor(torch.stack([col, row]), values,
                                   (num_nodes, num_nodes)).coalesce()


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, adj):
        if adj.is_sparse:
            return torch.sparse.mm(adj, self.lin(x)) + self.bias
        return adj @ self.lin(x) + self.bias


class GINConv(nn.Module):
    def __init__(self, nn_module, eps=0.0, train_eps=True):
        super().__init__()
        self.nn = nn_module
        self.eps = nn.Parameter(torch.tensor([eps])) if train_eps else eps

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        return self.nn((1 + self.eps) * x + agg)


class MaxConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.msg = nn.Linear(2 * in_channels, out_channels)

    def forward(self, x, edge_index):
        src, dst = edge_index
        m = F.relu(self.msg(torch.cat([x[dst], x[src] - x[dst]], dim=-1)))  # EdgeConv message
        out = torch.zeros(x.size(0), m.size(1))
        index = dst.unsqueeze(-1).expand_as(m)
        return out.scatter_reduce(0, index, m, reduce='amax', include_self=False)


class Net(nn.Module):
    def __init__(self, in_dim, hidden, n_classes, sparse=True):
        super().__init__()
        self.sparse = sparse
        self.gcn = GCNConv(in_dim, hidden)
        self.gin = GINConv(nn.Sequential(nn.Linear(hidden, hidden), nn.BatchNorm1d(hidden),
                                         nn.ReLU(), nn.Linear(hidden, hidden)))
        self.edge = MaxConv(hidden, hidden)
        self.gate = nn.Linear(hidden, 1)
        self.head = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, n_classes))

    def forward(self, x, edge_index, batch, num_graphs):
        adj = gcn_norm(edge_index, x.size(0), self.sparse)
        h = F.relu(self.gcn(x, adj))
        h = F.relu(self.gin(h, edge_index))
        h = h + self.edge(h, edge_index)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(1)
        mean_pool = torch.zeros(num_graphs, h.size(1)).index_add_(0, batch, h) / counts
        max_pool = torch.zeros(num_graphs, h.size(1)).scatter_reduce(
            0, batch.unsqueeze(1).expand_as(h), h, reduce='amax', include_self=False)
        alpha = scatter_softmax(self.gate(h).squeeze(-1), batch, num_graphs)
        att_pool = torch.zeros(num_graphs, h.size(1)).index_add_(0, batch, alpha.unsqueeze(1) * h)
        return self.head(torch.cat([mean_pool, max_pool, att_pool], dim=1))


def random_graph(rng, label):
    """Class 0: a ring with chords; class 1: two dense clusters joined by a bridge."""
    n = rng.randint(6, 12)
    if label == 0:
        edges = [(i, (i + 1) % n) for i in range(n)]
        edges += [(i, (i + rng.randint(2, n - 1)) % n) for i in range(0, n, 3)]
    else:
        half = n // 2
        edges = [(i, j) for i in range(half) for j in range(i + 1, half) if rng.rand() < 0.7]
        edges += [(i, j) for i in range(half, n) for j in range(i + 1, n) if rng.rand() < 0.7]
        edges.append((0, n - 1))
    e = np.array(edges, dtype=np.int64).T
    e = np.concatenate([e, e[::-1]], axis=1)  # undirected
    deg = np.bincount(e[1], minlength=n)
    x = np.stack([deg / 5.0, rng.randn(n) * 0.1, np.ones(n)], axis=1).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(e)


def collate(graphs):
    xs, eis = zip(*graphs)
    sizes = torch.tensor([x.size(0) for x in xs])
    offsets = torch.cumsum(sizes, 0) - sizes
    edge_index = torch.cat([ei + off for ei, off in zip(eis, offsets)], dim=1)
    batch = torch.repeat_interleave(torch.arange(len(xs)), sizes)
    return torch.cat(xs, 0), edge_index, batch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=6)
    parser.add_argument('--adj', choices=['sparse', 'dense'], default='sparse')
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(3)
    rng = np.random.RandomState(3)
    labels = rng.randint(0, 2, size=160)
    graphs = [random_graph(rng, int(l)) for l in labels]
    y = torch.from_numpy(labels).long()
    model = Net(3, 16, 2, sparse=args.adj == 'sparse')
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    train_idx, test_idx = list(range(128)), list(range(128, 160))
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for b in range(0, len(train_idx), 16):
            idx = train_idx[b:b + 16]
            x, edge_index, batch = collate([graphs[i] for i in idx])
            out = model(x, edge_index, batch, len(idx))
            loss = F.cross_entropy(out, y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        model.eval()
        with torch.no_grad():
            x, edge_index, batch = collate([graphs[i] for i in test_idx])
            out = model(x, edge_index, batch, len(test_idx))
            test_loss = F.cross_entropy(out, y[test_idx]).item()
            acc = (out.argmax(1) == y[test_idx]).float().mean().item()
        print('epoch {} train loss {:.5f} test loss {:.5f} acc {:.3f} gin eps {:.5f}'.format(
            epoch, total / len(train_idx), test_loss, acc, model.gin.eps.item()))


if __name__ == '__main__':
    main()
