"""A char-GPT training step on CUDA, tessera vs PyTorch eager, same model code (nanoGPT's
shakespeare-char shape by default: 6 layers, 6 heads, 384 channels, context 256, batch 64,
float32, AdamW). Timed with CUDA events, median of `--steps` steps after warm-up.

Run on a GPU machine: PYTHONPATH=python python benchmarks/bench_cuda_gpt.py
"""
from __future__ import annotations

import argparse

import numpy as np


def build(nn, F, vocab: int, n_layer: int, n_head: int, n_embd: int, block: int):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.qkv, self.proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.fc, self.out = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = _split3(self.qkv(self.ln1(x)), n_embd)
            q = q.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            k = k.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            v = v.reshape(b, t, n_head, c // n_head).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, n_embd), nn.Embedding(block, n_embd)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx, pos):
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT()


def _split3(t, n):
    return t[..., :n], t[..., n:2 * n], t[..., 2 * n:]


def make_step(M, layers: int = 6, heads: int = 6, embd: int = 384, block: int = 256,
              batch: int = 64, amp: bool = False):
    """One training step of the char-GPT in library M (tessera or torch) on CUDA: zero_grad,
    forward + cross-entropy (under bf16 autocast when `amp`), backward, AdamW step."""
    nn, F = M.nn, M.nn.functional
    M.manual_seed(0)
    model = build(nn, F, 65, layers, heads, embd, block).to("cuda")
    opt = M.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx = M.asarray(rng.integers(0, 65, (batch, block)), device="cuda")
    tgt = M.asarray(rng.integers(0, 65, (batch * block,)), device="cuda")
    pos = M.asarray(np.arange(block), device="cuda")
    autocast = M.autocast("cuda", dtype=M.bfloat16, enabled=amp)

    def step():
        opt.zero_grad()
        with autocast:
            loss = F.cross_entropy(model(idx, pos).reshape(-1, 65), tgt)
        loss.backward()
        opt.step()
        return loss

    return step


def profiled_step(lib: str, amp: bool, warmup: int):
    """One char-GPT step of `lib` ("tessera" or "torch") under torch.profiler's CUDA activity
    (CUPTI sees tessera's kernels too), after `warmup` steps; returns the profile."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if lib == "torch":
        M = torch
    else:
        import tessera as M
    step = make_step(M, amp=amp)
    for _ in range(warmup):
        step()
    M.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        M.cuda.synchronize()
    return prof


def run(lib: str, args) -> float:
    if lib == "torch":
        import torch as M
    else:
        import tessera as M
    step = make_step(M, args.layers, args.heads, args.embd, args.block, args.batch, args.amp)
    from bench_cuda import cuda_time
    return cuda_time(step, M.cuda.synchronize, lambda: M.cuda.Event(enable_timing=True),
                     reps=args.steps)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=6)
    p.add_argument("--embd", type=int, default=384)
    p.add_argument("--block", type=int, default=256)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--amp", action="store_true", help="bfloat16 autocast (else float32)")
    args = p.parse_args()
    t_torch = run("torch", args)
    t_ts = run("tessera", args)
    print(f"char-GPT step {args.layers}x{args.heads}x{args.embd}, block {args.block}, batch "
          f"{args.batch}, {'bf16 autocast' if args.amp else 'float32'}: tessera {t_ts:.1f} ms, torch {t_torch:.1f} ms, "
          f"speed vs torch {t_torch / t_ts:.2f}x")


if __name__ == "__main__":
    main()
