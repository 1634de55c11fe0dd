"""Usage: kernels_cuda_attention.py [rows]. GPU time per kernel of one scaled_dot_product_attention
forward+backward at the char-GPT shape (64, 6, 256, 64, causal), tessera's default path and
PyTorch, float32 and bfloat16, through torch.profiler (CUPTI sees tessera's kernels too)."""
from __future__ import annotations

import os
import sys

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import tessera as ts
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

SHAPE = (64, 6, 256, 64)


def step_fn(lib, dtype: str):
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3)]
    if lib is torch:
        xs = [torch.tensor(a, device="cuda", dtype=getattr(torch, dtype), requires_grad=True)
              for a in arrs]
        sdpa, sync = torch.nn.functional.scaled_dot_product_attention, torch.cuda.synchronize
        g = torch.ones(SHAPE, dtype=getattr(torch, dtype), device="cuda")
    else:
        xs = [ts.asarray(a).astype(getattr(ts, dtype)).to("cuda").requires_grad_(True)
              for a in arrs]
        sdpa, sync = F.scaled_dot_product_attention, ts.cuda.synchronize
        g = ts.ones(SHAPE, dtype=getattr(ts, dtype), device="cuda")

    def step() -> None:
        sdpa(*xs, is_causal=True).backward(g)
    return step, sync


def main() -> None:
    """CAUSAL_BLOCK=n in the environment sets the causal block path's row block (a huge value
    turns it off)."""
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    A._C._set_attention_settings(causal_block=int(os.environ.get(
        "CAUSAL_BLOCK", A.attention_settings()["causal_block"])))
    for dtype in ("float32", "bfloat16"):
        for lib in (ts, torch):
            step, sync = step_fn(lib, dtype)
            for _ in range(3):
                step()
            sync()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                step()
                sync()
            print(f"--- {lib.__name__} {dtype}")
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=rows,
                                            max_name_column_width=80))


if __name__ == "__main__":
    main()
