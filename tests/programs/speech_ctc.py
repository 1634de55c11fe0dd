#!/usr/bin/env python
"""A tiny speech-recognition model trained with CTC on synthetic tone "words" (after the
DeepSpeech2-style tutorials and the torchaudio ASR pipeline, without torchaudio): features from
torch.stft with a Hann window, log power and a triangular filterbank by matmul, per-utterance
normalisation, SpecAugment masks from NumPy, a strided Conv1d front end whose output lengths are
computed by the conv formula, a bidirectional GRU over pack_padded_sequence, nn.CTCLoss with
both target layouts, greedy decoding with torch.unique_consecutive and an edit-distance WER."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

SAMPLE_RATE = 2000
N_FFT, HOP = 64, 32
FREQS = [180.0, 320.0, 470.0, 610.0, 760.0]  # one tone per symbol 1..5; 0 is the CTC blank


def synth_utterance(rng, max_symbols=5):
    n = rng.randint(2, max_symbols + 1)
    labels = rng.randint(1, len(FREQS) + 1, size=n)
    pieces = []
    for lab in labels:
        dur = rng.randint(160, 260)
        t = np.arange(dur) / SAMPLE_RATE
        tone = np.sin(2 * np.pi * FREQS[lab - 1] * t + rng.uniform(0, np.pi))
        pieces.append(tone * np.hanning(dur))
        pieces.append(np.zeros(rng.randint(30, 80)))
    wave = np.concatenate(pieces) + 0.05 * rng.randn(sum(len(p) for p in pieces))
    return torch.from_numpy(wave.astype(np.float32)), torch.from_numpy(labels.astype(np.int64))


def filterbank(n_filters, n_freqs):
    centers = torch.linspace(0, n_freqs - 1, n_filters + 2)
    bins = torch.arange(n_freqs).float()
    left, mid, right = centers[:-2, None], centers[1:-1, None], centers[2:, None]
    up = (bins - left) / (mid - left)
    down = (right - bins) / (right - mid)
    return torch.clamp(torch.minimum(up, down), min=0.0)  # (n_filters, n_freqs)


def featurize(wave, fbank):
    spec = torch.stft(wave, n_fft=N_FFT, hop_length=HOP, window=torch.hann_window(N_FFT),
                      center=True, return_complex=True)
    power = spec.abs().pow(2)  # (freq, frames)
    feats = torch.log(fbank @ power + 1e-6)
    feats = (feats - feats.mean(dim=1, keepdim=True)) / (feats.std(dim=1, keepdim=True) + 1e-5)
    return feats.t()  # (frames, n_filters)


def spec_augment(feats, rng, max_f=3, max_t=4):
    feats = feats.clone()
    f = rng.randint(0, max_f + 1)
    f0 = rng.randint(0, feats.shape[1] - f + 1)
    feats[:, f0:f0 + f] = 0
    t = rng.randint(0, max_t + 1)
    t0 = rng.randint(0, max(1, feats.shape[0] - t))
    feats[t0:t0 + t, :] = 0
    return feats


class SpeechModel(nn.Module):
    def __init__(self, n_feats, n_class, hidden=32):
        super().__init__()
        self.conv = nn.Conv1d(n_feats, hidden, kernel_size=5, stride=2, padding=2, bias=False)
        self.bn = nn.BatchNorm1d(hidden)
        self.rnn = nn.GRU(hidden, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.classifier = nn.Sequential(nn.LayerNorm(2 * hidden), nn.Linear(2 * hidden, n_class))

    def output_lengths(self, lengths):
        conv = self.conv
        return ((lengths + 2 * conv.padding[0] - conv.dilation[0] * (conv.kernel_size[0] - 1) - 1)
                // conv.stride[0] + 1)

    def forward(self, x, lengths):
        # x: (batch, time, feats)
        x = F.hardtanh(self.bn(self.conv(x.transpose(1, 2))), 0, 20).transpose(1, 2)
        out_lengths = self.output_lengths(lengths)
        packed = pack_padded_sequence(x, out_lengths.cpu(), batch_first=True,
                                      enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, batch_first=True)
        return self.classifier(out), out_lengths


def greedy_decode(log_probs, lengths, blank=0):
    best = log_probs.argmax(dim=-1)
    results = []
    for seq, n in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(seq[:n])
        results.append(collapsed[collapsed != blank].tolist())
    return results


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(b) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] != b[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(b)]


def collate(items):
    feats, labels = zip(*items)
    feat_lengths = torch.tensor([f.shape[0] for f in feats])
    label_lengths = torch.tensor([len(l) for l in labels])
    return (pad_sequence(list(feats), batch_first=True), feat_lengths,
            pad_sequence(list(labels), batch_first=True), label_lengths)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(7)
    rng = np.random.RandomState(7)
    fbank = filterbank(12, N_FFT // 2 + 1)
    data = []
    for _ in range(96):
        wave, labels = synth_utterance(rng)
        data.append((featurize(wave, fbank), labels))
    train, test = data[:80], data[80:]
    print('frames', min(f.shape[0] for f, _ in data), '-', max(f.shape[0] for f, _ in data))

    model = SpeechModel(12, len(FREQS) + 1)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2,
                                                    total_steps=10 * args.epochs + 1,
                                                    anneal_strategy='linear')
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for b in range(0, len(train), 8):
            batch = [(spec_augment(f, rng), l) for f, l in train[b:b + 8]]
            feats, feat_lengths, labels, label_lengths = collate(batch)
            logits, out_lengths = model(feats, feat_lengths)
            log_probs = F.log_softmax(logits, dim=2).transpose(0, 1)  # (T, N, C) for CTC
            if b % 16 == 0:  # padded (N, S) targets
                loss = ctc(log_probs, labels, out_lengths, label_lengths)
            else:  # concatenated 1-D targets
                flat = torch.cat([l[:n] for l, n in zip(labels, label_lengths)])
                loss = F.ctc_loss(log_probs, flat, out_lengths, label_lengths, blank=0,
                                  reduction='mean', zero_infinity=True)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 400)
            optimizer.step()
            scheduler.step()
            total += loss.item()
        model.eval()
        with torch.no_grad():
            feats, feat_lengths, labels, label_lengths = collate(test)
            logits, out_lengths = model(feats, feat_lengths)
            log_probs = F.log_softmax(logits, dim=2)
            test_loss = ctc(log_probs.transpose(0, 1), labels, out_lengths, label_lengths)
            per_seq = F.ctc_loss(log_probs.transpose(0, 1), labels, out_lengths, label_lengths,
                                 reduction='none')
            hyps = greedy_decode(log_probs, out_lengths)
            refs = [l[:n].tolist() for l, n in zip(labels, label_lengths)]
            wer = sum(edit_distance(h, r) for h, r in zip(hyps, refs)) / sum(map(len, refs))
        print('epoch {} lr {:.5f} train loss {:.5f} test loss {:.5f} worst {:.3f} '
              'wer {:.3f}'.format(epoch, scheduler.get_last_lr()[0], total / 10,
                                  test_loss.item(), per_seq.max().item(), wer))
    print('example', refs[0], '->', hyps[0])


if __name__ == '__main__':
    main()
