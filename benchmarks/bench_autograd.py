"""Autograd benchmarks: recording overhead, a 100-op backward chain, and a 784-256-10 MLP
forward+backward at batch 128 (CPU, same thread count). Ratios > 1 mean tessera is faster.

    python benchmarks/bench_autograd.py [--threads N] [--markdown FILE]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import torch

import tessera as ts
from common import machine, table, timeit


def mlp_ts(x, y1h, w1, b1, w2, b2):
    h = ts.maximum(x @ w1.mT + b1, 0.0)
    logits = h @ w2.mT + b2
    m = ts.max(logits, axis=1, keepdims=True)
    lse = ts.log(ts.sum(ts.exp(logits - m), axis=1, keepdims=True)) + m
    loss = -ts.mean(ts.sum((logits - lse) * y1h, axis=1))
    loss.backward()
    return loss


def mlp_torch(x, y, w1, b1, w2, b2):
    h = torch.relu(x @ w1.mT + b1)
    loss = torch.nn.functional.cross_entropy(h @ w2.mT + b2, y)
    loss.backward()
    return loss


def cases():
    out = []
    a, b = ts.ones(4, requires_grad=True), ts.ones(4)
    at, bt = torch.ones(4, requires_grad=True), torch.ones(4)
    out.append(("record: add, 4 float32, requires_grad", {"ts": lambda: a + b, "torch": lambda: at + bt}))

    def chain(x, lib_sum):
        for _ in range(100):
            x = x * 1.0001
        lib_sum(x).backward()

    out.append(("backward through a 100-op chain of 4-element tensors",
                {"ts": lambda: chain(a, ts.sum), "torch": lambda: chain(at, torch.sum)}))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    y1h = np.eye(10, dtype=np.float32)[y]
    w1 = (rng.standard_normal((256, 784)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((10, 256)) * 0.05).astype(np.float32)
    b1, b2 = np.zeros(256, np.float32), np.zeros(10, np.float32)
    P = [ts.asarray(p.copy(), requires_grad=True) for p in (w1, b1, w2, b2)]
    T = [torch.tensor(p.copy(), requires_grad=True) for p in (w1, b1, w2, b2)]
    xt_, y1h_t = ts.asarray(x), ts.asarray(y1h)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)

    def ts_step():
        for p in P:
            p.grad = None
        mlp_ts(xt_, y1h_t, *P)

    def torch_step():
        for p in T:
            p.grad = None
        mlp_torch(xt, yt, *T)

    out.append(("MLP 784-256-10 fwd+bwd, batch 128", {"ts": ts_step, "torch": torch_step}))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--markdown", default=None)
    args = ap.parse_args()
    threads = args.threads or ts.get_num_threads()
    ts.set_num_threads(threads)
    torch.set_num_threads(threads)
    rows = []
    for name, fns in cases():
        row = {"case": name, "np": None}
        for lib in ("ts", "torch"):
            row[lib] = timeit(fns[lib], args.min_time)
        rows.append(row)
        print(f"{name}: ts={row['ts']:.3g}s torch={row['torch']:.3g}s", file=sys.stderr)
    md = (f"Machine: {machine()}; threads: {threads}; tessera {ts.__version__}, "
          f"PyTorch {torch.__version__}.\n\n" + table(rows))
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
