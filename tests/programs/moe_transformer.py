#!/usr/bin/env python
"""A small decoder with mixture-of-experts feed-forward layers and T5-style relative position
buckets: GShard/Switch top-2 gating (softmax, topk, one_hot, cumsum for expert capacity, an
auxiliary load-balancing loss, einsum dispatch 'sec,sm->ecm' and combine 'sec,ecm->sm'),
nn.MultiheadAttention with a bool causal mask from torch.triu, per-head weights
(average_attn_weights=False) and a float relative-position bias from T5's _relative_position_bucket
(torch.log, torch.min, full_like, where), a causal Conv1d token mixer through F.pad, and
ZeRO-style parameter groups by dimension."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def relative_position_bucket(relative_position, bidirectional=False, num_buckets=16,
                             max_distance=32):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1))
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


class Top2MoE(nn.Module):
    def __init__(self, d_model, d_ff, num_experts=4, capacity_factor=1.5):
        super().__init__()
        self.num_experts = num_experts
        self.capacity_factor = capacity_factor
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.w_in = nn.Parameter(torch.randn(num_experts, d_model, d_ff) / math.sqrt(d_model))
        self.w_out = nn.Parameter(torch.randn(num_experts, d_ff, d_model) / math.sqrt(d_ff))

    def forward(self, x):
        shape = x.shape
        tokens = x.reshape(-1, shape[-1])  # (s, m)
        s, e = tokens.shape[0], self.num_experts
        capacity = int(math.ceil(self.capacity_factor * 2 * s / e))
        probs = F.softmax(self.gate(tokens), dim=-1)  # (s, e)
        top_p, top_i = torch.topk(probs, k=2, dim=-1)
        mask1 = F.one_hot(top_i[:, 0], e).float()
        mask2 = F.one_hot(top_i[:, 1], e).float()
        # load balancing (Switch / GShard): fraction routed * mean gate probability
        aux_loss = (mask1.mean(0) * probs.mean(0)).sum() * e
        # position of each token in its expert's buffer; drop those past capacity
        loc1 = torch.cumsum(mask1, dim=0) - 1
        loc2 = torch.cumsum(mask2, dim=0) - 1 + mask1.sum(0, keepdim=True)
        mask1 = mask1 * (loc1 < capacity).float()
        mask2 = mask2 * (loc2 < capacity).float()
        g1 = (probs * mask1).sum(-1)
        g2 = (probs * mask2).sum(-1)
        denom = (g1 + g2).clamp(min=torch.finfo(probs.dtype).eps)
        g1, g2 = g1 / denom, g2 / denom
        pos1 = (loc1 * mask1).sum(-1).long()
        pos2 = (loc2 * mask2).sum(-1).long()
        combine = (g1[:, None, None] * mask1[:, :, None] * F.one_hot(pos1, capacity)[:, None, :]
                   + g2[:, None, None] * mask2[:, :, None] * F.one_hot(pos2, capacity)[:, None, :])
        dispatch = combine.bool().to(tokens.dtype)  # (s, e, c)
        expert_in = torch.einsum('sec,sm->ecm', dispatch, tokens)
        h = F.gelu(torch.einsum('ecm,emf->ecf', expert_in, self.w_in), approximate='tanh')
        expert_out = torch.einsum('ecf,efm->ecm', h, self.w_out)
        out = torch.einsum('sec,ecm->sm', combine, expert_out)
        dropped = (1 - (mask1.sum(-1) > 0).float()).sum()
        return out.reshape(shape), aux_loss, dropped


class Block(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, num_buckets):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True, bias=False)
        self.rel_bias = nn.Embedding(num_buckets, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mixer = nn.Conv1d(d_model, d_model, kernel_size=3, groups=d_model)
        self.ln3 = nn.LayerNorm(d_model)
        self.moe = Top2MoE(d_model, d_ff)
        self.num_buckets = num_buckets

    def forward(self, x):
        b, t, _ = x.shape
        ctx = torch.arange(t)[:, None]
        mem = torch.arange(t)[None, :]
        buckets = relative_position_bucket(mem - ctx, num_buckets=self.num_buckets)
        bias = self.rel_bias(buckets).permute(2, 0, 1)  # (heads, t, t)
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        mask = bias.masked_fill(causal, float('-inf')).repeat(b, 1, 1)  # (b*heads, t, t)
        h = self.ln1(x)
        a, weights = self.attn(h, h, h, attn_mask=mask, need_weights=True,
                               average_attn_weights=False)
        x = x + a
        h = self.ln2(x).transpose(1, 2)
        x = x + self.mixer(F.pad(h, (2, 0))).transpose(1, 2)  # causal depthwise conv
        m, aux, dropped = self.moe(self.ln3(x))
        return x + m, aux, dropped, weights


class MoEDecoder(nn.Module):
    def __init__(self, vocab, d_model=32, n_heads=4, d_ff=48, n_layers=2, num_buckets=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_heads, d_ff, num_buckets)
                                     for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        aux_total, dropped_total, weights = 0.0, 0.0, None
        for block in self.blocks:
            x, aux, dropped, weights = block(x)
            aux_total = aux_total + aux
            dropped_total = dropped_total + dropped
        return self.head(self.ln_f(x)), aux_total / len(self.blocks), dropped_total, weights


def make_batch(rng, batch, t, vocab):
    """Copy task: the second half repeats the first half."""
    half = rng.randint(1, vocab, size=(batch, t // 2 + 1))
    seq = np.concatenate([half, half], axis=1)[:, :t + 1]
    seq = torch.from_numpy(seq.astype(np.int64))
    return seq[:, :-1], seq[:, 1:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    vocab, t = 16, 16
    model = MoEDecoder(vocab)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    buckets = relative_position_bucket(torch.arange(-40, 1), num_buckets=16, max_distance=32)
    print('buckets', buckets.flip(0).tolist()[:12], '...', buckets[0].item())
    print('bidirectional', relative_position_bucket(torch.tensor([-20, -3, 0, 3, 20]),
                                                    bidirectional=True).tolist())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1},
                                   {'params': no_decay, 'weight_decay': 0.0}], lr=3e-3)
    for step in range(args.steps):
        x, y = make_batch(rng, 8, t, vocab)
        logits, aux, dropped, _ = model(x)
        ce = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        loss = ce + 0.01 * aux
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 8 == 7:
            print('step {} loss {:.5f} ce loss {:.5f} aux loss {:.5f} dropped {}'.format(
                step, loss.item(), ce.item(), aux.item(), int(dropped.item())))
    model.eval()
    with torch.no_grad():
        x, y = make_batch(rng, 16, t, vocab)
        logits, aux, dropped, weights = model(x)
        second_half = (logits.argmax(-1) == y)[:, t // 2:].float().mean().item()
        eval_loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1)).item()
    print('eval loss {:.5f} copy accuracy {:.3f} attn weights {} causal {} rows sum {}'.format(
        eval_loss, second_half, tuple(weights.shape),
        bool((weights.triu(1) == 0).all()), bool(torch.allclose(weights.sum(-1),
                                                              torch.ones(1)))))


if __name__ == '__main__':
    main()
