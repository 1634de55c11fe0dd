#!/usr/bin/env python
"""A character-level LSTM over lines of tiny Shakespeare, batched by length with
pack_padded_sequence / pad_packed_sequence, trained with gradient clipping (after the
PyTorch char-RNN tutorials and practical-pytorch)."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


class CharRNN(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden_size, n_layers=2, dropout=0.0):
        super(CharRNN, self).__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.rnn = nn.LSTM(embed_dim, hidden_size, n_layers, batch_first=True, dropout=dropout)
        self.decoder = nn.Linear(hidden_size, vocab_size)

    def forward(self, inputs, lengths, hidden=None):
        emb = self.embed(inputs)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        packed_out, hidden = self.rnn(packed, hidden)
        out, out_lengths = pad_packed_sequence(packed_out, batch_first=True,
                                               total_length=inputs.size(1))
        return self.decoder(out), hidden


def load_lines(path, n_lines, rng):
    with open(path, 'r', encoding='utf-8') as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}  # 0 is padding
    lines = [l for l in text.split('\n') if len(l) > 3]
    pick = rng.choice(len(lines), size=n_lines, replace=False)
    return [lines[i][:40] for i in pick], stoi


def make_batch(lines, stoi):
    seqs = [torch.tensor([stoi[c] for c in line], dtype=torch.long) for line in lines]
    lengths = torch.tensor([len(s) - 1 for s in seqs])
    inputs = pad_sequence([s[:-1] for s in seqs], batch_first=True, padding_value=0)
    targets = pad_sequence([s[1:] for s in seqs], batch_first=True, padding_value=-100)
    return inputs, targets, lengths


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--data', type=str, required=True)
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--clip', type=float, default=0.5)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(1)
    rng = np.random.RandomState(1)
    lines, stoi = load_lines(args.data, 96, rng)
    model = CharRNN(len(stoi) + 1, 16, 48)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.95)
    criterion = nn.CrossEntropyLoss(ignore_index=-100)
    batches = [make_batch(lines[i:i + 16], stoi) for i in range(0, len(lines), 16)]
    for epoch in range(args.epochs):
        model.train()
        total, count = 0.0, 0
        for i, (inputs, targets, lengths) in enumerate(batches[:-1]):
            optimizer.zero_grad()
            output, (h, c) = model(inputs, lengths)
            loss = criterion(output.view(-1, output.size(-1)), targets.view(-1))
            loss.backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            nn.utils.clip_grad_value_(model.parameters(), 1.0)
            optimizer.step()
            total += loss.item()
            count += 1
            print('epoch {} batch {} grad norm {:.4f} loss: {:.6f}'.format(epoch, i, norm.item(),
                                                                           loss.item()))
        model.eval()
        with torch.no_grad():
            inputs, targets, lengths = batches[-1]
            output, _ = model(inputs, lengths)
            val = F.cross_entropy(output.transpose(1, 2), targets, reduction='sum')
            print('epoch {} valid loss: {:.6f} | train avg {:.4f}'.format(
                epoch, (val / (targets != -100).sum()).item(), total / count))
    # sample greedily from a prompt, carrying the hidden state
    itos = {i: c for c, i in stoi.items()}
    with torch.no_grad():
        x = torch.tensor([[stoi[c] for c in 'ROMEO:']])
        out, hidden = model(x, torch.tensor([x.size(1)]))
        text = 'ROMEO:'
        nxt = out[0, -1].argmax()
        for _ in range(20):
            text += itos[int(nxt)]
            out, hidden = model(nxt.view(1, 1), torch.tensor([1]), hidden)
            nxt = out[0, -1].argmax()
        print(repr(text))


if __name__ == '__main__':
    main()
