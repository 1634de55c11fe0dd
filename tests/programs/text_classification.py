#!/usr/bin/env python
"""Text classification after the torchtext tutorial ("Text classification with the torchtext
library"), without torchtext: a vocabulary built with collections.Counter, nn.EmbeddingBag
(mode='mean') fed flat token ids plus offsets from a collate_batch with torch.cumsum, and the
data-loading idioms around it: DataLoader(num_workers=2, persistent_workers=True,
worker_init_fn, prefetch_factor) over a map-style dataset of dicts, a DistributedSampler with one
replica and set_epoch, an IterableDataset sharded per worker through get_worker_info(), SGD with
StepLR and clip_grad_norm_, and a padded-batch variant (pad_sequence + masked mean) of the same
model that must agree with EmbeddingBag."""
import argparse
import os
import random
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info
from torch.utils.data.distributed import DistributedSampler

TOPICS = {
    0: 'match team goal score season league coach player win cup',
    1: 'market stock price bank shares profit trade rate growth oil',
    2: 'software chip phone internet data computer users launch app cloud',
    3: 'election minister party vote government president law court police war',
}
FILLER = 'the a of to in and on for with said new after over'.split()


def make_corpus(rng, n):
    texts, labels = [], []
    for _ in range(n):
        label = rng.randint(0, 4)
        words = TOPICS[label].split()
        other = TOPICS[(label + rng.randint(1, 4)) % 4].split()
        length = rng.randint(6, 16)
        toks = []
        for _ in range(length):
            r = rng.rand()
            toks.append(words[rng.randint(len(words))] if r < 0.45 else
                        other[rng.randint(len(other))] if r < 0.6 else
                        FILLER[rng.randint(len(FILLER))])
        texts.append(' '.join(toks))
        labels.append(label)
    return texts, labels


class NewsDataset(Dataset):
    def __init__(self, texts, labels, vocab):
        self.items = [{'input_ids': [vocab.get(t, 1) for t in text.split()], 'label': label}
                      for text, label in zip(texts, labels)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


class ShardedStream(IterableDataset):
    """Each worker reads every num_workers-th example, as a file-backed stream would."""

    def __init__(self, items):
        super().__init__()
        self.items = items

    def __iter__(self):
        info = get_worker_info()
        worker_id, num_workers = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(worker_id, len(self.items), num_workers):
            yield self.items[i]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for item in batch:
        label_list.append(item['label'])
        processed_text = torch.tensor(item['input_ids'], dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


def collate_padded(batch):
    ids = pad_sequence([torch.tensor(b['input_ids']) for b in batch], batch_first=True,
                       padding_value=0)
    return torch.tensor([b['label'] for b in batch]), ids, ids != 0


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode='mean')
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)

    def forward_padded(self, ids, mask):
        emb = F.embedding(ids, self.embedding.weight)
        summed = (emb * mask.unsqueeze(-1)).sum(1)
        return self.fc(summed / mask.sum(1, keepdim=True))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--epochs', type=int, default=4)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--init', type=str, default='')
    args = parser.parse_args()
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    texts, labels = make_corpus(rng, 400)
    counter = Counter(tok for text in texts[:320] for tok in text.split())
    itos = ['<pad>', '<unk>'] + [w for w, _ in counter.most_common()]
    vocab = {w: i for i, w in enumerate(itos)}
    train_ds = NewsDataset(texts[:320], labels[:320], vocab)
    test_ds = NewsDataset(texts[320:], labels[320:], vocab)
    print('vocab', len(vocab), 'most common', counter.most_common(3))

    model = TextClassificationModel(len(vocab), 16, 4)
    if args.init:
        if os.path.exists(args.init):
            model.load_state_dict(torch.load(args.init))
        else:
            torch.save(model.state_dict(), args.init)
    sampler = DistributedSampler(train_ds, num_replicas=1, rank=0, shuffle=False)
    g = torch.Generator()
    g.manual_seed(0)
    train_loader = DataLoader(train_ds, batch_size=16, sampler=sampler, collate_fn=collate_batch,
                              num_workers=args.workers, persistent_workers=args.workers > 0,
                              worker_init_fn=seed_worker, generator=g,
                              prefetch_factor=2 if args.workers > 0 else None)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.5)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        total_acc, total_count, total_loss = 0, 0, 0.0
        for label, text, offsets in train_loader:
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
            total_loss += loss.item()
        scheduler.step()
        # evaluation through the sharded stream: the order depends on the workers, the sums not
        model.eval()
        stream = DataLoader(ShardedStream(test_ds.items), batch_size=10,
                            collate_fn=collate_batch, num_workers=args.workers)
        correct, seen, loss_sum = 0, 0, 0.0
        with torch.no_grad():
            for label, text, offsets in stream:
                out = model(text, offsets)
                loss_sum += F.cross_entropy(out, label, reduction='sum').item()
                correct += (out.argmax(1) == label).sum().item()
                seen += label.size(0)
        print('epoch {} lr {:.3f} train loss {:.5f} train acc {:.3f} test loss {:.5f} '
              'test acc {:.3f} seen {}'.format(epoch, scheduler.get_last_lr()[0],
                                               total_loss / len(train_loader),
                                               total_acc / total_count, loss_sum / seen,
                                               correct / seen, seen))

    with torch.no_grad():
        label, text, offsets = collate_batch([test_ds[i] for i in range(8)])
        bag = model(text, offsets)
        label2, ids, mask = collate_padded([test_ds[i] for i in range(8)])
        padded = model.forward_padded(ids, mask)
    print('embedding bag matches the padded mean', torch.allclose(bag, padded, atol=1e-5),
          tuple(ids.shape))
    ex = 'the team won the cup after a late goal'
    ids = torch.tensor([vocab.get(t, 1) for t in ex.split()])
    print('predicted topic', model(ids, torch.tensor([0])).argmax(1).item())


if __name__ == '__main__':
    main()
