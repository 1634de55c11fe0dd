"""Sequence-to-sequence GRU with Bahdanau attention and teacher forcing, learning to reverse
digit strings (after the PyTorch "NLP From Scratch: translation with attention" tutorial)."""
from __future__ import unicode_literals, print_function, division

import argparse
import os
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import TensorDataset, DataLoader, RandomSampler, SequentialSampler

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
SOS_token = 0
EOS_token = 1
MAX_LENGTH = 8


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None, teacher_forcing=True):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []

        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)

            if target_tensor is not None and teacher_forcing:
                # Teacher forcing: Feed the target as the next input
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                # Without teacher forcing: use its own predictions as the next input
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # detach from history as input

        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


def make_pairs(n, seed):
    r = random.Random(seed)
    inp = torch.full((n, MAX_LENGTH), EOS_token, dtype=torch.long)
    tgt = torch.full((n, MAX_LENGTH), EOS_token, dtype=torch.long)
    for k in range(n):
        length = r.randint(3, MAX_LENGTH - 1)
        digits = [r.randint(2, 11) for _ in range(length)]
        inp[k, :length] = torch.tensor(digits)
        tgt[k, :length] = torch.tensor(digits[::-1])
    return inp, tgt


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=6)
    parser.add_argument('--hidden', type=int, default=32)
    parser.add_argument('--dropout', type=float, default=0.1)
    parser.add_argument('--teacher-forcing', type=float, default=0.5)
    parser.add_argument('--shuffle', action='store_true')
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    random.seed(0)
    torch.manual_seed(0)

    inp, tgt = make_pairs(96, 0)
    train_data = TensorDataset(inp.to(device), tgt.to(device))
    sampler = RandomSampler(train_data) if args.shuffle else SequentialSampler(train_data)
    train_dataloader = DataLoader(train_data, sampler=sampler, batch_size=16)

    encoder = EncoderRNN(12, args.hidden, args.dropout).to(device)
    decoder = AttnDecoderRNN(args.hidden, 12, args.dropout).to(device)
    if args.init:
        if os.path.exists(args.init):
            state = torch.load(args.init)
            encoder.load_state_dict(state['encoder'])
            decoder.load_state_dict(state['decoder'])
        else:
            torch.save({'encoder': encoder.state_dict(), 'decoder': decoder.state_dict()}, args.init)

    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        total_loss = 0
        for data in train_dataloader:
            input_tensor, target_tensor = data
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            use_tf = random.random() < args.teacher_forcing
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor, use_tf)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        print('(%d %d%%) loss %.5f (%.1fs)' % (epoch, epoch / args.epochs * 100,
                                                total_loss / len(train_dataloader), time.time() - start))

    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(inp[:4])
        decoder_outputs, _, attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
        print('eval loss %.5f' % criterion(decoder_outputs.view(-1, 12), tgt[:4].view(-1)).item())
        print('attention rows sum to one:', torch.allclose(attn.sum(-1), torch.ones(4, MAX_LENGTH)))
        for k in range(2):
            print('>', inp[k].tolist(), '=', tgt[k].tolist(), '<', decoded_ids[k].tolist())


if __name__ == '__main__':
    main()
