"""Variable-length sequence classification fed through a custom Dataset, collate_fn with
pad_sequence, samplers and pack_padded_sequence into an LSTM (the usual tutorial pipeline)."""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, random_split)
from torch.utils.data.dataloader import default_collate


class SequenceDataset(Dataset):
    """Sequences of token ids; the label is whether token 3 occurs more often than token 4."""

    def __init__(self, n, seed, vocab=8):
        rng = np.random.RandomState(seed)
        self.seqs = []
        self.labels = []
        for _ in range(n):
            length = rng.randint(2, 12)
            s = rng.randint(1, vocab, size=length)
            self.seqs.append(torch.from_numpy(s).long())
            self.labels.append(int((s == 3).sum() > (s == 4).sum()))

    def __len__(self):
        return len(self.seqs)

    def __getitem__(self, idx):
        return self.seqs[idx], self.labels[idx]


def collate_batch(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels, dtype=torch.float32)


class CountingStream(IterableDataset):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor([i, i * i]), i % 2


class Classifier(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, 1)

    def forward(self, padded, lengths):
        emb = self.embedding(padded)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_out, (h, c) = self.lstm(packed)
        out, out_lengths = pad_packed_sequence(packed_out, batch_first=True)
        assert out_lengths.tolist() == lengths.tolist()
        feat = torch.cat([h[-2], h[-1]], dim=1)
        return self.head(feat).squeeze(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=3)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)

    full = SequenceDataset(160, 0)
    train_set, val_set = random_split(full, [0.75, 0.25], generator=torch.Generator().manual_seed(0))
    assert len(train_set) == 120 and len(val_set) == 40
    assert sorted(train_set.indices + val_set.indices) == list(range(160))
    print('split sizes', len(train_set), len(val_set))

    # samplers: the index sets they cover, independent of the generator's stream
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert sorted(RandomSampler(range(7))) == list(range(7))
    assert len(list(RandomSampler(range(7), replacement=True, num_samples=20))) == 20
    assert sorted(SubsetRandomSampler([3, 5, 9])) == [3, 5, 9]
    w = WeightedRandomSampler([0.0, 0.0, 1.0, 1.0], num_samples=10, replacement=True)
    assert set(w) <= {2, 3} and len(w) == 10
    assert list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)) == \
        [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert len(BatchSampler(range(10), batch_size=3, drop_last=True)) == 3
    shuffled = [i for b in DataLoader(range(20), batch_size=6, shuffle=True) for i in b.tolist()]
    assert sorted(shuffled) == list(range(20))

    # datasets
    td = TensorDataset(torch.arange(10.).view(5, 2), torch.arange(5))
    x0, y0 = td[2]
    assert x0.tolist() == [4.0, 5.0] and y0.item() == 2
    cat = ConcatDataset([td, Subset(td, [0, 1])])
    assert len(cat) == 7 and cat[6][1].item() == 1
    batch = default_collate([(torch.ones(2), 1), (torch.zeros(2), 0)])
    assert batch[0].shape == (2, 2) and batch[1].tolist() == [1, 0]
    stream = list(DataLoader(CountingStream(5), batch_size=2))
    assert [b[1].tolist() for b in stream] == [[0, 1], [0, 1], [0]]
    assert stream[1][0].tolist() == [[2, 4], [3, 9]]
    dl = DataLoader(td, batch_size=2, drop_last=True, num_workers=0, pin_memory=False)
    assert len(dl) == 2 and [len(b[0]) for b in dl] == [2, 2]
    print('dataset checks passed')

    # train on a fixed split so that runs compare step by step across libraries
    train_set, val_set = Subset(full, list(range(120))), Subset(full, range(120, 160))
    train_loader = DataLoader(train_set, batch_size=16, shuffle=False, collate_fn=collate_batch,
                              num_workers=0)
    val_loader = DataLoader(val_set, batch_size=20, collate_fn=collate_batch)
    model = Classifier(8, 8, 12)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    optimizer = torch.optim.RMSprop(model.parameters(), lr=0.01)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        model.train()
        for step, (padded, lengths, labels) in enumerate(train_loader):
            optimizer.zero_grad()
            logits = model(padded, lengths)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            if step % 3 == 0:
                print('epoch {} step {} loss {:.5f}'.format(epoch, step, loss.item()))
        model.eval()
        correct = total = 0
        val_loss = 0.0
        with torch.no_grad():
            for padded, lengths, labels in val_loader:
                logits = model(padded, lengths)
                val_loss += criterion(logits, labels).item() * len(labels)
                correct += ((logits > 0).float() == labels).sum().item()
                total += len(labels)
        print('epoch {} val loss {:.5f} acc {:.3f}'.format(epoch, val_loss / total, correct / total))


if __name__ == '__main__':
    main()
