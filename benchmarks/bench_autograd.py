"""Autograd benchmarks: recording overhead, a 100-op backward chain, and a 784-256-10 MLP
forward+backward at batch 128 (CPU, same thread count). Ratios > 1 mean tessera is faster.

    python benchmarks/bench_autograd.py [--threads N] [--markdown FILE] [--cpu-time]

--cpu-time times with the process's CPU time instead of the wall clock: on a shared, loaded
machine it is the steadier measure of single-threaded work (it excludes time spent waiting
for a core; with --threads 1 it is the work itself).
"""
from __future__ import annotations

import sys
import time
import types

import numpy as np
import torch

import common
import tessera as ts
from common import bench_main


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


def cases(quick: bool = False):
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


if __name__ == "__main__":
    if "--cpu-time" in sys.argv:
        sys.argv.remove("--cpu-time")
        common.time = types.SimpleNamespace(perf_counter=time.process_time)  # only common's clock
    sys.exit(bench_main(__doc__, cases))
