"""Usage: kernels_cuda_gpt.py [rows] [tessera|torch] [--amp]. GPU time per kernel of the tessera char-GPT step, through torch.profiler (CUPTI sees every
kernel in the process, tessera's included). Run on a GPU machine with PyTorch installed."""
from __future__ import annotations

import sys

import torch
from torch.profiler import ProfilerActivity, profile

from bench_cuda_gpt import make_step


def main() -> None:
    lib = sys.argv[2] if len(sys.argv) > 2 else "tessera"
    import tessera
    ts = torch if lib == "torch" else tessera
    step = make_step(ts, amp="--amp" in sys.argv)

    for _ in range(2):
        step()
    ts.cuda.synchronize()
    print(f"--- {lib}{' bf16 autocast' if '--amp' in sys.argv else ' float32'}")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        ts.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=int(sys.argv[1]) if len(sys.argv) > 1 else 40,
                                    max_name_column_width=90))


if __name__ == "__main__":
    main()
