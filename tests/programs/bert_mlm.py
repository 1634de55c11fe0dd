#!/usr/bin/env python
"""A small BERT-style masked-language-model encoder in the Hugging Face manner: token, position
and segment embeddings, nn.TransformerEncoder with GELU and a bool src_key_padding_mask plus a
float attention mask, an MLM head tied to the word embeddings, AdamW with parameter groups (no
weight decay on biases and LayerNorm), a linear warmup/decay schedule written with LambdaLR,
gradient accumulation and clip_grad_norm_."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, CLS, SEP, MASK = 0, 1, 2, 3


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position, type_vocab_size=2, dropout=0.1):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=PAD)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("position_ids", torch.arange(max_position).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids, token_type_ids=None):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        embeddings = (self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
                      + self.token_type_embeddings(token_type_ids))
        return self.dropout(self.LayerNorm(embeddings))


class BertForMaskedLM(nn.Module):
    def __init__(self, vocab_size, hidden_size=32, num_layers=2, num_heads=4,
                 intermediate_size=64, max_position=32, dropout=0.1):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden_size, max_position, dropout=dropout)
        layer = nn.TransformerEncoderLayer(hidden_size, num_heads, intermediate_size, dropout,
                                           activation="gelu", batch_first=True,
                                           layer_norm_eps=1e-12)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.transform = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU(),
                                       nn.LayerNorm(hidden_size, eps=1e-12))
        self.decoder = nn.Linear(hidden_size, vocab_size)
        self.decoder.weight = self.embeddings.word_embeddings.weight  # weight tying
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if module.padding_idx is not None:
                module.weight.data[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None):
        hidden = self.embeddings(input_ids, token_type_ids)
        seq_len = input_ids.size(1)
        # an additive float mask: an ALiBi-like distance penalty
        idx = torch.arange(seq_len, device=input_ids.device)
        attn_mask = -0.05 * (idx[None, :] - idx[:, None]).abs().float()
        hidden = self.encoder(hidden, mask=attn_mask,
                              src_key_padding_mask=attention_mask == 0)
        logits = self.decoder(self.transform(hidden))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                                   ignore_index=-100)
        return loss, logits


def mask_tokens(input_ids, attention_mask, rng, vocab_size, mlm_probability=0.15):
    """The 80/10/10 BERT masking rule, drawn from NumPy so both runs see the same batches."""
    labels = input_ids.clone()
    special = (input_ids == CLS) | (input_ids == SEP) | (attention_mask == 0)
    probability_matrix = torch.full(labels.shape, mlm_probability)
    probability_matrix.masked_fill_(special, value=0.0)
    draws = torch.from_numpy(rng.rand(*labels.shape).astype(np.float32))
    masked_indices = draws < probability_matrix
    labels[~masked_indices] = -100
    inputs = input_ids.clone()
    replace = torch.from_numpy(rng.rand(*labels.shape) < 0.8) & masked_indices
    inputs[replace] = MASK
    random_words = torch.from_numpy(rng.rand(*labels.shape) < 0.5) & masked_indices & ~replace
    words = torch.from_numpy(rng.randint(4, vocab_size, size=labels.shape)).long()
    inputs[random_words] = words[random_words]
    return inputs, labels


def make_corpus(rng, n, vocab_size, max_len):
    """Sentences from a tiny 'grammar': token t is followed by (t * 3) % V most of the time."""
    seqs, types = [], []
    for _ in range(n):
        length = rng.randint(8, max_len - 1)
        toks = [rng.randint(4, vocab_size)]
        for _ in range(length - 1):
            nxt = 4 + (toks[-1] * 3) % (vocab_size - 4) if rng.rand() < 0.85 else rng.randint(4, vocab_size)
            toks.append(nxt)
        cut = length // 2
        seq = [CLS] + toks[:cut] + [SEP] + toks[cut:]
        seqs.append(seq)
        types.append([0] * (cut + 2) + [1] * (length - cut))
    ids = np.zeros((n, max_len + 1), dtype=np.int64)
    tt = np.zeros_like(ids)
    for i, (s, t) in enumerate(zip(seqs, types)):
        ids[i, :len(s)] = s
        tt[i, :len(t)] = t
    return torch.from_numpy(ids), torch.from_numpy(tt)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step)
                   / float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--accum", type=int, default=2)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--init", type=str, default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    vocab_size, max_len = 40, 23
    input_ids, token_type_ids = make_corpus(rng, 128, vocab_size, max_len)
    attention_mask = (input_ids != PAD).long()

    model = BertForMaskedLM(vocab_size, dropout=args.dropout)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    assert model.decoder.weight is model.embeddings.word_embeddings.weight

    no_decay = ["bias", "LayerNorm.weight", "norm1.weight", "norm2.weight", "transform.2.weight"]
    grouped = [
        {"params": [p for n, p in model.named_parameters()
                    if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in model.named_parameters()
                    if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(grouped, lr=3e-3, betas=(0.9, 0.98), eps=1e-6)
    steps_per_epoch = math.ceil(len(input_ids) / args.batch_size / args.accum)
    total_steps = steps_per_epoch * args.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, 2, total_steps)
    print("parameters: {} (decay {}, no decay {})".format(
        sum(p.numel() for p in model.parameters()),
        len(grouped[0]["params"]), len(grouped[1]["params"])))

    step = 0
    for epoch in range(args.epochs):
        model.train()
        total, count = 0.0, 0
        for i, start in enumerate(range(0, len(input_ids), args.batch_size)):
            ids = input_ids[start:start + args.batch_size]
            am = attention_mask[start:start + args.batch_size]
            tt = token_type_ids[start:start + args.batch_size]
            inputs, labels = mask_tokens(ids, am, rng, vocab_size)
            loss, _ = model(inputs, am, tt, labels=labels)
            (loss / args.accum).backward()
            total += loss.item()
            count += 1
            if (i + 1) % args.accum == 0:
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
        print("epoch {} step {} lr {:.6f} grad norm {:.4f} train loss {:.5f}".format(
            epoch, step, scheduler.get_last_lr()[0], grad_norm.item(), total / count))

    # evaluated with autograd on: torch's no-grad "fast path" of nn.TransformerEncoder returns
    # NaN for padded sequences when a float mask and a bool key-padding mask are both given
    model.eval()
    ids, am, tt = input_ids[:32], attention_mask[:32], token_type_ids[:32]
    inputs, labels = mask_tokens(ids, am, rng, vocab_size)
    loss, logits = model(inputs, am, tt, labels=labels)
    pred = logits.detach().argmax(-1)
    sel = labels != -100
    acc = (pred[sel] == labels[sel]).float().mean().item()
    print("eval loss {:.5f} masked accuracy {:.3f} masked {}".format(
        loss.item(), acc, int(sel.sum())))


if __name__ == "__main__":
    main()
