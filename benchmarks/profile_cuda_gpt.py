"""Where the host time of a tessera char-GPT step on CUDA goes: cProfile over a few steps
(the GPU runs asynchronously, so host-side functions that synchronize show up as long
self-times). Run on a GPU machine: PYTHONPATH=python python benchmarks/profile_cuda_gpt.py
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from bench_cuda_gpt import make_step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--top", type=int, default=35)
    args = p.parse_args()
    import tessera as ts
    step = make_step(ts, batch=args.batch)

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
