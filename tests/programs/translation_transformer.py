#!/usr/bin/env python
"""Sequence-to-sequence translation with nn.Transformer (after the PyTorch "Language
translation with nn.Transformer" tutorial) on a synthetic language pair: the target is the
source reversed with every token mapped through a fixed permutation. Covers
generate_square_subsequent_mask, key padding masks, padding_idx and greedy decoding."""
import argparse
import math
import os

import numpy as np
import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import Transformer
from torch.nn.utils.rnn import pad_sequence

PAD_IDX, BOS_IDX, EOS_IDX = 1, 2, 3
VOCAB = 16


class PositionalEncoding(nn.Module):
    def __init__(self, emb_size: int, dropout: float, maxlen: int = 64):
        super(PositionalEncoding, self).__init__()
        den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pos_embedding = torch.zeros((maxlen, emb_size))
        pos_embedding[:, 0::2] = torch.sin(pos * den)
        pos_embedding[:, 1::2] = torch.cos(pos * den)
        pos_embedding = pos_embedding.unsqueeze(-2)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('pos_embedding', pos_embedding)

    def forward(self, token_embedding: Tensor):
        return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])


class TokenEmbedding(nn.Module):
    def __init__(self, vocab_size: int, emb_size):
        super(TokenEmbedding, self).__init__()
        self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_IDX)
        self.emb_size = emb_size

    def forward(self, tokens: Tensor):
        return self.embedding(tokens.long()) * math.sqrt(self.emb_size)


class Seq2SeqTransformer(nn.Module):
    def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead, src_vocab_size,
                 tgt_vocab_size, dim_feedforward=64, dropout=0.1):
        super(Seq2SeqTransformer, self).__init__()
        self.transformer = Transformer(d_model=emb_size, nhead=nhead,
                                       num_encoder_layers=num_encoder_layers,
                                       num_decoder_layers=num_decoder_layers,
                                       dim_feedforward=dim_feedforward, dropout=dropout)
        self.generator = nn.Linear(emb_size, tgt_vocab_size)
        self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
        self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
        self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

    def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                memory_key_padding_mask):
        src_emb = self.positional_encoding(self.src_tok_emb(src))
        tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
        outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
        return self.generator(outs)

    def encode(self, src, src_mask):
        return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)

    def decode(self, tgt, memory, tgt_mask):
        return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory,
                                        tgt_mask)


def generate_square_subsequent_mask(sz):
    mask = (torch.triu(torch.ones((sz, sz))) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    return mask


def create_mask(src, tgt):
    src_seq_len = src.shape[0]
    tgt_seq_len = tgt.shape[0]
    tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
    src_mask = torch.zeros((src_seq_len, src_seq_len)).type(torch.bool)
    src_padding_mask = (src == PAD_IDX).transpose(0, 1)
    tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
    return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask


PERM = np.random.RandomState(7).permutation(np.arange(4, VOCAB))


def make_pairs(rng, n):
    pairs = []
    for _ in range(n):
        length = rng.randint(3, 9)
        src = rng.randint(4, VOCAB, size=length)
        tgt = PERM[src[::-1] - 4]
        pairs.append((src, tgt))
    return pairs


def collate_fn(batch):
    src_batch, tgt_batch = [], []
    for src_sample, tgt_sample in batch:
        src_batch.append(torch.cat((torch.tensor([BOS_IDX]), torch.tensor(src_sample),
                                    torch.tensor([EOS_IDX]))))
        tgt_batch.append(torch.cat((torch.tensor([BOS_IDX]), torch.tensor(tgt_sample),
                                    torch.tensor([EOS_IDX]))))
    src_batch = pad_sequence(src_batch, padding_value=PAD_IDX)
    tgt_batch = pad_sequence(tgt_batch, padding_value=PAD_IDX)
    return src_batch, tgt_batch


def greedy_decode(model, src, src_mask, max_len, start_symbol):
    memory = model.encode(src, src_mask)
    ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long)
    for i in range(max_len - 1):
        tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool))
        out = model.decode(ys, memory, tgt_mask)
        out = out.transpose(0, 1)
        prob = model.generator(out[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
        if next_word == EOS_IDX:
            break
    return ys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--dropout', type=float, default=0.0)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    train_pairs = make_pairs(rng, 64)
    val_pairs = make_pairs(rng, 32)

    transformer = Seq2SeqTransformer(2, 2, 32, 4, VOCAB, VOCAB, 64, dropout=args.dropout)
    for p in transformer.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    if args.init:
        if os.path.exists(args.init):
            transformer.load_state_dict(torch.load(args.init))
        else:
            torch.save(transformer.state_dict(), args.init)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.001, betas=(0.9, 0.98), eps=1e-9)

    def run_epoch(pairs, train):
        transformer.train(train)
        losses = 0
        batches = [pairs[i:i + 16] for i in range(0, len(pairs), 16)]
        for batch in batches:
            src, tgt = collate_fn(batch)
            tgt_input = tgt[:-1, :]
            src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
            with torch.set_grad_enabled(train):
                logits = transformer(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                                     tgt_padding_mask, src_padding_mask)
                tgt_out = tgt[1:, :]
                loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            losses += loss.item()
        return losses / len(batches)

    for epoch in range(1, args.epochs + 1):
        train_loss = run_epoch(train_pairs, True)
        val_loss = run_epoch(val_pairs, False)
        print('Epoch: {}, Train loss: {:.6f}, Val loss: {:.6f}'.format(epoch, train_loss, val_loss))

    transformer.eval()
    src = torch.tensor(np.concatenate([[BOS_IDX], val_pairs[0][0], [EOS_IDX]])).view(-1, 1)
    num_tokens = src.shape[0]
    src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
    tgt_tokens = greedy_decode(transformer, src, src_mask, max_len=num_tokens + 5,
                               start_symbol=BOS_IDX).flatten()
    print('source', src.flatten().tolist(), 'expected', val_pairs[0][1].tolist(),
          'decoded', tgt_tokens.tolist())


if __name__ == '__main__':
    main()
