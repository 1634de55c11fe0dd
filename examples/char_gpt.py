"""Train a small character-level GPT on tiny Shakespeare, report the validation loss and
sample text from it.

    PYTHONPATH=python python examples/char_gpt.py --steps 3000

The model is nanoGPT's (token + position embeddings, pre-LayerNorm blocks of causal
self-attention and a GELU MLP, a final LayerNorm and a linear head), smaller than its
shakespeare-char configuration so that it trains on a CPU: 4 layers, 4 heads, 128 channels,
a 64-character context. AdamW with a linear warm-up and a cosine decay of the learning rate,
gradients clipped at norm 1. input.txt is read from --data-dir (default
$TESSERA_DATA/tinyshakespeare, else ../shared/data/tinyshakespeare); nothing is downloaded.
`--small` trains a tiny model for 30 steps (a smoke test: seconds, not quality).
"""
from __future__ import annotations

import argparse
import math
import time
from typing import Dict, Iterator, List, Optional, Tuple

import tessera as ts
from tessera import nn
from tessera.nn import functional as F
from tessera.utils.data import DataLoader, Generator, Subset

from _common import default_data_dir


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float) -> None:
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd={n_embd} must be a multiple of n_head={n_head}")
        self.n_head, self.dropout = n_head, dropout
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)  # query, key and value in one product
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x: ts.Tensor) -> ts.Tensor:
        B, T, C = x.shape
        qkv = self.c_attn(x).reshape(B, T, 3, self.n_head, C // self.n_head)
        q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))  # (B, heads, T, head size)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        out: ts.Tensor = self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))
        return out


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

    def forward(self, x: ts.Tensor) -> ts.Tensor:
        x = x + self.attn(self.ln_1(x))
        out: ts.Tensor = x + self.mlp(self.ln_2(x))
        return out


class GPT(nn.Module):
    """Logits (B, T, vocab) for token ids (B, T), T <= block_size."""

    def __init__(self, vocab_size: int, block_size: int = 64, n_layer: int = 4, n_head: int = 4,
                 n_embd: int = 128, dropout: float = 0.0) -> None:
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        # GPT-2's initialization: N(0, 0.02) weights, zero biases.
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if getattr(m, "bias", None) is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx: ts.Tensor) -> ts.Tensor:
        T = idx.shape[1]
        x = self.wte(idx) + self.wpe(ts.arange(T))
        logits: ts.Tensor = self.lm_head(self.ln_f(self.blocks(x)))
        return logits

    @ts.no_grad()
    def generate(self, idx: ts.Tensor, max_new_tokens: int, temperature: float = 1.0,
                 generator: Optional[ts.random.Generator] = None) -> ts.Tensor:
        """Appends `max_new_tokens` sampled ids to idx (B, T0)."""
        was_training = self.training
        self.eval()
        for _ in range(max_new_tokens):
            logits = self(idx[:, -self.block_size:])[:, -1, :]
            probs = F.softmax(logits / temperature, dim=-1)
            nxt = ts.random.multinomial(probs, 1, generator=generator)
            idx = ts.concat([idx, nxt], axis=1)
        self.train(was_training)
        return idx


def forever(loader: DataLoader) -> Iterator[Tuple[ts.Tensor, ts.Tensor]]:
    """The loader's batches, epoch after epoch."""
    while True:
        yield from loader


def lm_loss(model: nn.Module, x: ts.Tensor, y: ts.Tensor) -> ts.Tensor:
    logits = model(x)
    loss: ts.Tensor = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return loss


def evaluate(model: nn.Module, loader: DataLoader) -> float:
    """The mean loss over the loader's batches (eval mode, no grad)."""
    model.eval()
    with ts.no_grad():
        losses = [float(lm_loss(model, x, y).item()) for x, y in loader]
    model.train()
    return sum(losses) / len(losses)


def make_scheduler(opt: ts.optim.Optimizer, steps: int, warmup: int,
                   min_lr_ratio: float) -> ts.optim.lr_scheduler.LRScheduler:
    """Linear warm-up for `warmup` steps, then a cosine decay to min_lr_ratio * lr."""
    lr = opt.param_groups[0]["lr"]
    warm = ts.optim.lr_scheduler.LinearLR(opt, start_factor=0.01, total_iters=warmup)
    cosine = ts.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps - warmup, 1),
                                                     eta_min=lr * min_lr_ratio)
    return ts.optim.lr_scheduler.SequentialLR(opt, [warm, cosine], milestones=[warmup])


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=default_data_dir("tinyshakespeare"))
    ap.add_argument("--n-layer", type=int, default=4)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=128)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--min-lr-ratio", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--eval-interval", type=int, default=250)
    ap.add_argument("--eval-batches", type=int, default=20, help="validation batches per evaluation")
    ap.add_argument("--sample-chars", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: tessera's default)")
    ap.add_argument("--save", default="", help="write the trained state dict here")
    ap.add_argument("--small", action="store_true",
                    help="2 layers, 64 channels, 32-char context, 30 steps")
    args = ap.parse_args(argv)
    if args.small:
        args.n_layer, args.n_embd, args.block_size, args.batch_size = 2, 64, 32, 16
        args.steps, args.warmup, args.eval_interval, args.eval_batches = 30, 5, 15, 4
        args.sample_chars = 100
    return args


def main(argv: Optional[List[str]] = None) -> Dict[str, List[float]]:
    args = parse_args(argv)
    if args.threads:
        ts.set_num_threads(args.threads)
    ts.manual_seed(args.seed)

    train = ts.datasets.TinyShakespeare(args.data_dir, block_size=args.block_size, train=True)
    val = ts.datasets.TinyShakespeare(args.data_dir, block_size=args.block_size, train=False)
    batches = forever(DataLoader(train, batch_size=args.batch_size, shuffle=True,
                                 generator=Generator(args.seed)))
    # A fixed validation sample, so that successive evaluations compare like with like.
    pick = ts.randperm(len(val), generator=ts.random.Generator(1234))
    val_loader = DataLoader(Subset(val, pick[:args.eval_batches * args.batch_size].tolist()),
                            batch_size=args.batch_size)

    model = GPT(train.vocab_size, args.block_size, args.n_layer, args.n_head, args.n_embd,
                args.dropout)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters, vocabulary "
          f"{train.vocab_size}, {len(train.data):,} train characters", flush=True)
    opt = ts.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99),
                         weight_decay=args.weight_decay)
    sched = make_scheduler(opt, args.steps, args.warmup, args.min_lr_ratio)

    hist: Dict[str, List[float]] = {"step": [], "train_loss": [], "val_loss": []}
    t0 = time.perf_counter()
    window: List[float] = []
    for step in range(1, args.steps + 1):
        x, y = next(batches)
        loss = lm_loss(model, x, y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        window.append(float(loss.item()))
        if step % args.eval_interval == 0 or step == args.steps:
            val_loss = evaluate(model, val_loader)
            hist["step"].append(step)
            hist["train_loss"].append(sum(window) / len(window))
            hist["val_loss"].append(val_loss)
            dt = time.perf_counter() - t0
            print(f"step {step}: train loss {hist['train_loss'][-1]:.4f}  val loss {val_loss:.4f}  "
                  f"lr {sched.get_last_lr()[0]:.2e}  ({dt:.0f} s, {step / dt:.2f} steps/s)",
                  flush=True)
            window = []
    print(f"trained {args.steps} steps in {time.perf_counter() - t0:.0f} s; final val loss "
          f"{hist['val_loss'][-1]:.4f}", flush=True)

    start = ts.asarray([train.encode("\n")])
    out = model.generate(start, args.sample_chars, temperature=0.8,
                         generator=ts.random.Generator(args.seed))
    print("--- sample ---\n" + train.decode(out[0]), flush=True)
    if args.save:
        ts.save(model.state_dict(), args.save)
        print(f"saved {args.save}")
    return hist


if __name__ == "__main__":
    main()
