"""Usage: kernels_cuda_gpt.py [rows] [tessera|torch] [--amp]. GPU time per kernel of the tessera char-GPT step, through torch.profiler (CUPTI sees every
kernel in the process, tessera's included). Run on a GPU machine with PyTorch installed."""
from __future__ import annotations

import sys

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from bench_cuda_gpt import build


def main() -> None:
    lib = sys.argv[2] if len(sys.argv) > 2 else "tessera"
    import tessera
    ts = torch if lib == "torch" else tessera
    F = ts.nn.functional
    ts.manual_seed(0)
    model = build(ts.nn, F, 65, 6, 6, 384, 256).to("cuda")
    opt = ts.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    idx = ts.asarray(rng.integers(0, 65, (64, 256)), device="cuda")
    tgt = ts.asarray(rng.integers(0, 65, (64 * 256,)), device="cuda")
    pos = ts.asarray(np.arange(256), device="cuda")
    amp = ts.autocast("cuda", dtype=ts.bfloat16, enabled="--amp" in sys.argv)

    def step():
        opt.zero_grad()
        with amp:
            loss = F.cross_entropy(model(idx, pos).reshape(-1, 65), tgt)
        loss.backward()
        opt.step()

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
