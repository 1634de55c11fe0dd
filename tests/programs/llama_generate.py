#!/usr/bin/env python
"""A tiny Llama in the style of meta-llama/llama's model.py and generation.py: RMSNorm, SwiGLU,
rotary embeddings through complex numbers (torch.polar, view_as_complex/view_as_real),
grouped-query attention with repeat_kv, a KV cache written by slice assignment,
F.scaled_dot_product_attention, a torch.compile'd training step, and generation under
@torch.inference_mode() with temperature, top-k and top-p (sort, cumsum, scatter) sampling
through torch.multinomial, beside greedy decoding."""
import argparse
import math
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class ModelArgs:
    dim: int = 32
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: Optional[int] = 2
    vocab_size: int = 24
    multiple_of: int = 16
    norm_eps: float = 1e-5
    max_batch_size: int = 4
    max_seq_len: int = 48


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))


class Attention(nn.Module):
    def __init__(self, args: ModelArgs):
        super().__init__()
        self.n_kv_heads = args.n_heads if args.n_kv_heads is None else args.n_kv_heads
        self.n_local_heads = args.n_heads
        self.n_local_kv_heads = self.n_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.register_buffer("cache_k", torch.zeros(
            (args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim)),
            persistent=False)
        self.register_buffer("cache_v", torch.zeros(
            (args.max_batch_size, args.max_seq_len, self.n_local_kv_heads, self.head_dim)),
            persistent=False)

    def forward(self, x, start_pos: int, freqs_cis, mask: Optional[torch.Tensor],
                use_cache: bool):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        if use_cache:
            self.cache_k = self.cache_k.to(xq)
            self.cache_v = self.cache_v.to(xq)
            self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
            self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
            keys = self.cache_k[:bsz, : start_pos + seqlen]
            values = self.cache_v[:bsz, : start_pos + seqlen]
        else:
            keys, values = xk, xv
        keys = repeat_kv(keys, self.n_rep)
        values = repeat_kv(values, self.n_rep)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        if mask is None and not use_cache:
            output = F.scaled_dot_product_attention(xq, keys, values, is_causal=True)
        else:
            scores = torch.einsum("bhqd,bhkd->bhqk", xq, keys) / math.sqrt(self.head_dim)
            if mask is not None:
                scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            output = torch.einsum("bhqk,bhkd->bhqd", scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int, multiple_of: int):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class TransformerBlock(nn.Module):
    def __init__(self, layer_id: int, args: ModelArgs):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, 4 * args.dim, args.multiple_of)
        self.layer_id = layer_id
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = RMSNorm(args.dim, eps=args.norm_eps)

    def forward(self, x, start_pos, freqs_cis, mask, use_cache):
        h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask, use_cache)
        return h + self.feed_forward(self.ffn_norm(h))


class Transformer(nn.Module):
    def __init__(self, params: ModelArgs):
        super().__init__()
        self.params = params
        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.layers = torch.nn.ModuleList(
            [TransformerBlock(layer_id, params) for layer_id in range(params.n_layers)])
        self.norm = RMSNorm(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
        self.register_buffer("freqs_cis", precompute_freqs_cis(
            params.dim // params.n_heads, params.max_seq_len * 2), persistent=False)

    def forward(self, tokens: torch.Tensor, start_pos: int = 0, use_cache: bool = False):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
        mask = None
        if use_cache and seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=1)
            mask = torch.hstack([torch.zeros((seqlen, start_pos), device=tokens.device),
                                 mask]).type_as(h)
        for layer in self.layers:
            h = layer(h, start_pos, freqs_cis, mask, use_cache)
        h = self.norm(h)
        return self.output(h).float()


def sample_top_p(probs, p, generator=None):
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = probs_sum - probs_sort > p
    probs_sort[mask] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    next_token = torch.multinomial(probs_sort, num_samples=1, generator=generator)
    return torch.gather(probs_idx, -1, next_token), int((~mask).sum())


def top_k_top_p_filtering(logits, top_k=0, top_p=1.0, filter_value=-float("Inf")):
    """The Hugging Face helper: scatter the sorted mask back to vocabulary order."""
    if top_k > 0:
        indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.masked_fill(indices_to_remove, filter_value)
    if top_p < 1.0:
        sorted_logits, sorted_indices = torch.sort(logits, dim=-1, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > top_p
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
                                                             sorted_indices_to_remove)
        logits = logits.masked_fill(indices_to_remove, filter_value)
    return logits


@torch.inference_mode()
def generate(model, prompt_tokens, max_gen_len, temperature=0.6, top_p=0.9, generator=None):
    bsz = len(prompt_tokens)
    min_prompt_len = min(len(t) for t in prompt_tokens)
    max_prompt_len = max(len(t) for t in prompt_tokens)
    total_len = min(model.params.max_seq_len, max_gen_len + max_prompt_len)
    pad_id = -1
    tokens = torch.full((bsz, total_len), pad_id, dtype=torch.long)
    for k, t in enumerate(prompt_tokens):
        tokens[k, : len(t)] = torch.tensor(t, dtype=torch.long)
    prev_pos = 0
    eos_reached = torch.tensor([False] * bsz)
    input_text_mask = tokens != pad_id
    kept = []
    for cur_pos in range(min_prompt_len, total_len):
        logits = model.forward(tokens[:, prev_pos:cur_pos], prev_pos, use_cache=True)
        if temperature > 0:
            probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
            next_token, n_kept = sample_top_p(probs, top_p, generator)
            kept.append(n_kept)
        else:
            next_token = torch.argmax(logits[:, -1], dim=-1)
        next_token = next_token.reshape(-1)
        # only replace token if prompt has already been generated
        next_token = torch.where(input_text_mask[:, cur_pos], tokens[:, cur_pos], next_token)
        tokens[:, cur_pos] = next_token
        eos_reached |= (~input_text_mask[:, cur_pos]) & (next_token == 0)
        prev_pos = cur_pos
        if all(eos_reached):
            break
    assert torch.is_inference_mode_enabled() and not torch.is_grad_enabled()
    return tokens, kept


def make_batch(rng, batch_size, seq_len, vocab_size):
    """Counting sequences with a random stride: token t+1 = (t + stride) mod (V - 1) + 1."""
    starts = rng.randint(1, vocab_size, size=(batch_size, 1))
    strides = rng.randint(1, 4, size=(batch_size, 1))
    seq = (starts - 1 + strides * np.arange(seq_len + 1)[None, :]) % (vocab_size - 1) + 1
    seq = torch.from_numpy(seq.astype(np.int64))
    return seq[:, :-1].contiguous(), seq[:, 1:].contiguous()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=40)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    torch.set_float32_matmul_precision('high')
    rng = np.random.RandomState(0)
    params = ModelArgs()
    model = Transformer(params)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    print('state dict keys', len(model.state_dict()), 'buffers',
          sorted({n.split('.')[-1] for n, _ in model.named_buffers()}))
    compiled = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1,
                                  betas=(0.9, 0.95), fused=True)
    for step in range(args.steps):
        x, y = make_batch(rng, 8, 16, params.vocab_size)
        logits = compiled(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if step % 8 == 7:
            print('step {} loss {:.5f}'.format(step, loss.item()))

    model.eval()
    x, y = make_batch(rng, 4, 20, params.vocab_size)
    with torch.no_grad():
        full = model(x)
        cached = torch.cat([model(x[:, :12], 0, use_cache=True)]
                           + [model(x[:, i:i + 1], i, use_cache=True) for i in range(12, 20)], 1)
        eval_loss = F.cross_entropy(full.transpose(1, 2), y)
    print('eval loss {:.5f} cache max diff small {}'.format(
        eval_loss.item(), bool((full - cached).abs().max() < 1e-4)))

    prompts = [x[i, :4 + i].tolist() for i in range(4)]
    greedy, _ = generate(model, prompts, max_gen_len=10, temperature=0.0)
    print('greedy', greedy[:, :12].tolist())
    g = torch.Generator().manual_seed(1234)
    sampled, kept = generate(model, prompts, max_gen_len=10, temperature=0.8, top_p=0.9,
                             generator=g)
    print('sampled shape', tuple(sampled.shape), 'prompt kept',
          all(sampled[i, :len(p)].tolist() == p for i, p in enumerate(prompts)),
          'in vocab', bool(((sampled >= 0) & (sampled < params.vocab_size)).all()))
    with torch.no_grad():
        logits = model(x[:, :8])[:, -1]
        filtered = top_k_top_p_filtering(logits.clone(), top_k=5, top_p=0.8)
        n_finite = torch.isfinite(filtered).sum(dim=-1)
        probs = F.softmax(filtered / 0.7, dim=-1)
        draws = torch.multinomial(probs, num_samples=6, replacement=True)
        print('filtered kept per row', n_finite.tolist(),
              'draws allowed', bool(torch.isfinite(filtered.gather(1, draws)).all()))


if __name__ == '__main__':
    main()
