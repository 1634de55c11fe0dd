#!/usr/bin/env python
"""A graph attention network (Velickovic et al.) on a synthetic citation-like graph with a
dense adjacency matrix, after pytorch/examples gat and pyGAT."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat=False, dropout=0.4,
                 leaky_relu_slope=0.2):
        super(GraphAttentionLayer, self).__init__()
        self.n_heads = n_heads
        self.concat = concat
        self.dropout = dropout
        if concat:
            self.out_features = out_features
            assert out_features % n_heads == 0
            self.n_hidden = out_features // n_heads
        else:
            self.n_hidden = out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        self.softmax = nn.Softmax(dim=1)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def _get_attention_scores(self, h_transformed):
        source_scores = torch.matmul(h_transformed, self.a[:, :self.n_hidden, :])
        target_scores = torch.matmul(h_transformed, self.a[:, self.n_hidden:, :])
        e = source_scores + target_scores.mT
        return self.leakyrelu(e)

    def forward(self, h, adj_mat):
        n_nodes = h.shape[0]
        h_transformed = torch.mm(h, self.W)
        h_transformed = F.dropout(h_transformed, self.dropout, training=self.training)
        h_transformed = h_transformed.view(n_nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        e = self._get_attention_scores(h_transformed)
        connectivity_mask = -9e16 * torch.ones_like(e)
        e = torch.where(adj_mat > 0, e, connectivity_mask)
        attention = F.softmax(e, dim=-1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, h_transformed)
        if self.concat:
            h_prime = h_prime.permute(1, 0, 2).contiguous().view(n_nodes, self.out_features)
        else:
            h_prime = h_prime.mean(dim=0)
        return h_prime


class GAT(nn.Module):
    def __init__(self, in_features, n_hidden, n_heads, num_classes, concat=False, dropout=0.4,
                 leaky_relu_slope=0.2):
        super(GAT, self).__init__()
        self.gat1 = GraphAttentionLayer(in_features=in_features, out_features=n_hidden,
                                        n_heads=n_heads, concat=concat, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)
        self.gat2 = GraphAttentionLayer(in_features=n_hidden, out_features=num_classes,
                                        n_heads=1, concat=False, dropout=dropout,
                                        leaky_relu_slope=leaky_relu_slope)

    def forward(self, input_tensor, adj_mat):
        x = self.gat1(input_tensor, adj_mat)
        x = F.elu(x)
        x = self.gat2(x, adj_mat)
        return F.log_softmax(x, dim=1)


def make_graph(rng, n_nodes=120, n_feats=40, n_classes=4):
    labels = rng.randint(0, n_classes, size=n_nodes)
    centers = rng.randn(n_classes, n_feats)
    feats = (centers[labels] + 1.5 * rng.randn(n_nodes, n_feats) > 0.8).astype(np.float32)
    same = labels[:, None] == labels[None, :]
    p = np.where(same, 0.08, 0.01)
    adj = (rng.rand(n_nodes, n_nodes) < p)
    adj = np.logical_or(adj, adj.T).astype(np.float32)
    np.fill_diagonal(adj, 1.0)
    return feats, adj, labels


def main():
    parser = argparse.ArgumentParser(description='PyTorch Graph Attention Network')
    parser.add_argument('--epochs', type=int, default=30)
    parser.add_argument('--lr', type=float, default=0.005)
    parser.add_argument('--l2', type=float, default=5e-4)
    parser.add_argument('--dropout-p', type=float, default=0.0)
    parser.add_argument('--hidden-dim', type=int, default=64)
    parser.add_argument('--num-heads', type=int, default=8)
    parser.add_argument('--concat-heads', action='store_true', default=True)
    parser.add_argument('--val-every', type=int, default=5)
    parser.add_argument('--seed', type=int, default=13)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.RandomState(args.seed)
    feats, adj, labels = make_graph(rng)
    features = torch.from_numpy(feats)
    # row-normalise the bag-of-words features like the Cora loader does
    features = features / features.sum(1, keepdim=True).clamp(min=1)
    adj_mat = torch.from_numpy(adj)
    labels = torch.from_numpy(labels).long()
    idx = torch.arange(labels.shape[0])
    idx_train, idx_val, idx_test = idx[:60], idx[60:90], idx[90:]

    gat_net = GAT(in_features=features.shape[1], n_hidden=args.hidden_dim,
                  n_heads=args.num_heads, num_classes=int(labels.max()) + 1,
                  concat=args.concat_heads, dropout=args.dropout_p, leaky_relu_slope=0.2)
    if args.init:
        if os.path.exists(args.init):
            gat_net.load_state_dict(torch.load(args.init))
        else:
            torch.save(gat_net.state_dict(), args.init)
    optimizer = torch.optim.Adam(gat_net.parameters(), lr=args.lr, weight_decay=args.l2)
    criterion = nn.NLLLoss()

    for epoch in range(args.epochs):
        gat_net.train()
        optimizer.zero_grad()
        y = gat_net(features, adj_mat)
        loss = criterion(y[idx_train], labels[idx_train])
        loss.backward()
        optimizer.step()
        if epoch % args.val_every == 0 or epoch == args.epochs - 1:
            gat_net.eval()
            with torch.no_grad():
                out = gat_net(features, adj_mat)
                val_loss = criterion(out[idx_val], labels[idx_val])
                acc = (out[idx_val].argmax(dim=1) == labels[idx_val]).sum().item() / len(idx_val)
            print('Epoch: {:03d} | train loss: {:.6f} | val loss: {:.6f} | val acc: {:.3f}'.format(
                epoch, loss.item(), val_loss.item(), acc))
    gat_net.eval()
    with torch.no_grad():
        out = gat_net(features, adj_mat)
        test_loss = F.nll_loss(out[idx_test], labels[idx_test])
        test_acc = out[idx_test].max(1)[1].eq(labels[idx_test]).double().mean()
    print('Test set results: loss: {:.6f} accuracy: {:.4f}'.format(test_loss.item(), test_acc.item()))


if __name__ == '__main__':
    main()
