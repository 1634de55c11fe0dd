"""Scratch benchmark: sum/max/argmax/column and row sums, tessera vs NumPy vs torch (CPU)."""
import time

import numpy as np
import torch

import tessera as ts


def best(f, reps=20):
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t) * 1e6


def row(name, a, tf, nf, pf):
    x, y = ts.asarray(a), torch.from_numpy(a)
    print(f"{name:28s} tessera {best(lambda: tf(x)):9.1f} us   numpy {best(lambda: nf(a)):9.1f} us"
          f"   torch {best(lambda: pf(y)):9.1f} us")


import os
if os.environ.get("NT"): ts.set_num_threads(int(os.environ["NT"])); torch.set_num_threads(int(os.environ["NT"]))
print("threads: tessera", ts.get_num_threads(), "torch", torch.get_num_threads())
rng = np.random.default_rng(0)
for n in (1 << 20, 1 << 24):
    a = rng.standard_normal(n).astype(np.float32)
    row(f"sum f32 2^{n.bit_length() - 1}", a, ts.sum, np.sum, torch.sum)
    row(f"max f32 2^{n.bit_length() - 1}", a, ts.max, np.max, torch.max)
    row(f"argmax f32 2^{n.bit_length() - 1}", a, ts.argmax, np.argmax, torch.argmax)
m = rng.standard_normal((2048, 2048)).astype(np.float32)
row("colsum 2048x2048 axis=0", m, lambda x: ts.sum(x, axis=0), lambda x: np.sum(x, axis=0),
    lambda x: torch.sum(x, dim=0))
row("rowsum 2048x2048 axis=1", m, lambda x: ts.sum(x, axis=1), lambda x: np.sum(x, axis=1),
    lambda x: torch.sum(x, dim=1))
row("colmax 2048x2048 axis=0", m, lambda x: ts.max(x, axis=0), lambda x: np.max(x, axis=0),
    lambda x: torch.amax(x, dim=0))
row("mean 2048x2048 axis=1", m, lambda x: ts.mean(x, axis=1), lambda x: np.mean(x, axis=1),
    lambda x: torch.mean(x, dim=1))
row("var 2048x2048", m, lambda x: ts.var(x), lambda x: np.var(x), lambda x: torch.var(x, correction=0))
row("cumsum 2048x2048 axis=1", m, lambda x: ts.cumulative_sum(x, axis=1),
    lambda x: np.cumsum(x, axis=1), lambda x: torch.cumsum(x, dim=1))
row("small sum (8,)", np.ones(8, np.float32), ts.sum, np.sum, torch.sum)
