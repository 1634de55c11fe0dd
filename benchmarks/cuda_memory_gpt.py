"""Where a nanoGPT training step's GPU memory goes, tessera next to PyTorch: after a few
eager steps, each library's allocator counters (peak allocated, requested, reserved) and
the waste they expose -- rounding (allocated - requested) and fragmentation (free blocks
inside split segments, "non-releasable") -- then tessera's memory_summary().

Run on a GPU machine: PYTHONPATH=python python benchmarks/cuda_memory_gpt.py [--amp]
"""
from __future__ import annotations

import argparse

from bench_cuda_gpt import CONFIGS, make_nanogpt_step


def report(lib: str, cfg: dict, amp: bool) -> None:
    if lib == "torch":
        import torch as M
    else:
        import tessera as M
    model, step = make_nanogpt_step(M, cfg, amp)
    for _ in range(3):
        step()
    M.cuda.synchronize()
    M.cuda.reset_peak_memory_stats()
    step()
    M.cuda.synchronize()
    s = M.cuda.memory_stats()
    mib = 1 << 20
    print(f"{lib:8s} peak allocated {s['allocated_bytes.all.peak'] / mib:8.1f} MiB, "
          f"peak requested {s['requested_bytes.all.peak'] / mib:8.1f} MiB, "
          f"peak reserved {s['reserved_bytes.all.peak'] / mib:8.1f} MiB, "
          f"rounding now {(s['allocated_bytes.all.current'] - s['requested_bytes.all.current']) / mib:6.2f} MiB, "
          f"non-releasable now {s['inactive_split_bytes.all.current'] / mib:7.1f} MiB, "
          f"segments {s['segment.all.current']}, cudaMalloc retries {s['num_alloc_retries']}")
    if lib == "tessera":
        print(M.cuda.memory_summary())
        snap = M.cuda.memory_snapshot()
        sizes = sorted((seg["total_size"] for seg in snap), reverse=True)
        print(f"tessera segments: {len(snap)}, largest {[x // mib for x in sizes[:8]]} MiB")
    del model, step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--config", default="nanogpt-char", choices=list(CONFIGS))
    p.add_argument("--amp", action="store_true")
    args = p.parse_args()
    cfg = CONFIGS[args.config]
    print(f"{args.config} {'bf16 autocast' if args.amp else 'float32'}:")
    for lib in ("torch", "tessera"):
        report(lib, cfg, args.amp)


if __name__ == "__main__":
    main()
