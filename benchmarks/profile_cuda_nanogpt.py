"""Where a nanoGPT training step's GPU time goes, tessera vs PyTorch: torch.profiler's CUDA
activity (CUPTI sees tessera's kernels too) over one step after warm-up, the top kernels by
total time for each library, and the host time of a step (issuing it, without waiting).
Run on a GPU machine: PYTHONPATH=python python benchmarks/profile_cuda_nanogpt.py [--amp]
"""
from __future__ import annotations

import argparse
import time

from bench_cuda_gpt import CONFIGS, make_nanogpt_step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="nanogpt-char", choices=list(CONFIGS))
    p.add_argument("--amp", action="store_true")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile
    import tessera as ts
    for name, M in (("torch", torch), ("tessera", ts)):
        _, step = make_nanogpt_step(M, CONFIGS[args.config], args.amp)
        for _ in range(3):
            step()
        M.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(5):
            step()
        host = (time.perf_counter() - t0) / 5
        M.cuda.synchronize()
        wall = (time.perf_counter() - t0) / 5
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            M.cuda.synchronize()
        evs = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
        total = sum(e.self_device_time_total for e in evs)
        print(f"== {name} {args.config} {'bf16' if args.amp else 'fp32'}: host {host*1e3:.1f} ms "
              f"issue, {wall*1e3:.1f} ms wall per step, GPU kernel total {total/1e3:.1f} ms, "
              f"{sum(e.count for e in evs)} kernels")
        for e in sorted(evs, key=lambda e: -e.self_device_time_total)[:args.top]:
            print(f"  {e.self_device_time_total/1e3:7.2f} ms {e.count:5d}x  {e.key[:110]}")


if __name__ == "__main__":
    main()
