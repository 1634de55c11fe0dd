"""Where the host time of a tessera char-GPT step on CUDA goes: cProfile over a few steps
(the GPU runs asynchronously, so host-side functions that synchronize show up as long
self-times). Run on a GPU machine: PYTHONPATH=python python benchmarks/profile_cuda_gpt.py
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from bench_cuda_gpt import build


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--top", type=int, default=35)
    args = p.parse_args()
    import tessera as ts
    F = ts.nn.functional
    ts.manual_seed(0)
    model = build(ts.nn, F, 65, 6, 6, 384, 256).to("cuda")
    opt = ts.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx = ts.asarray(rng.integers(0, 65, (args.batch, 256)), device="cuda")
    tgt = ts.asarray(rng.integers(0, 65, (args.batch * 256,)), device="cuda")
    pos = ts.asarray(np.arange(256), device="cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(idx, pos).reshape(-1, 65), tgt)
        loss.backward()
        opt.step()

    for _ in range(3):
        step()
    ts.cuda.synchronize()
    t0 = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(args.steps):
        step()
    prof.disable()
    t_host = (time.perf_counter() - t0) / args.steps
    ts.cuda.synchronize()
    t_all = (time.perf_counter() - t0) / args.steps
    print(f"per step: host (profiled) {t_host * 1e3:.1f} ms, until GPU done {t_all * 1e3:.1f} ms")
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(args.top)
    st.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
