"""Usage: kernels_cuda_gpt.py [rows] [tessera|torch] [--amp] [--config nanogpt-char|gpt2-small]. GPU time per kernel of the tessera char-GPT step, through torch.profiler (CUPTI sees every
kernel in the process, tessera's included). Run on a GPU machine with PyTorch installed."""
from __future__ import annotations

import sys

from bench_cuda_gpt import profiled_step


def main() -> None:
    config = sys.argv[sys.argv.index("--config") + 1] if "--config" in sys.argv else None
    pos = [a for a in sys.argv[1:] if not a.startswith("--") and a != config]
    lib = pos[1] if len(pos) > 1 else "tessera"
    print(f"--- {lib}{' bf16 autocast' if '--amp' in sys.argv else ' float32'} {config or 'char'}")
    prof = profiled_step(lib, amp="--amp" in sys.argv, warmup=2, config=config)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=int(pos[0]) if pos else 40,
                                    max_name_column_width=90))


if __name__ == "__main__":
    main()
