"""Usage: kernels_cuda_gpt.py [rows] [tessera|torch] [--amp]. GPU time per kernel of the tessera char-GPT step, through torch.profiler (CUPTI sees every
kernel in the process, tessera's included). Run on a GPU machine with PyTorch installed."""
from __future__ import annotations

import sys

from bench_cuda_gpt import profiled_step


def main() -> None:
    lib = sys.argv[2] if len(sys.argv) > 2 else "tessera"
    print(f"--- {lib}{' bf16 autocast' if '--amp' in sys.argv else ' float32'}")
    prof = profiled_step(lib, amp="--amp" in sys.argv, warmup=2)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=int(sys.argv[1]) if len(sys.argv) > 1 else 40,
                                    max_name_column_width=90))


if __name__ == "__main__":
    main()
