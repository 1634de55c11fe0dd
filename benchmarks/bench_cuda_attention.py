"""Usage: bench_cuda_attention.py [iters]. Time of F.scaled_dot_product_attention forward and
forward+backward on CUDA (synchronized wall clock, median) at the char-GPT shape (B=64, H=6,
T=256, head dim 64, causal) and a few others, float32 and bfloat16, by path: "flash" (the
fused kernel; the default on CUDA), "block" (causal GEMMs on the block lower triangle, Note
[Causal block attention]), "matmul" (full GEMMs + the fused softmax), and PyTorch when
installed."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

import numpy as np

import tessera as ts
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

SHAPES = [(64, 6, 256, 64, True), (64, 6, 256, 64, False), (16, 12, 1024, 64, True),
          (32, 8, 512, 128, True)]


def timeit(fn: Callable[[], Any], sync: Callable[[], None], iters: int) -> float:
    """Median milliseconds per call over `iters` timed calls after two warm-ups."""
    for _ in range(2):
        fn()
    sync()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e3


def bench_tessera(shape: tuple, dtype: str, path: str, iters: int) -> tuple:
    B, H, T, E, causal = shape
    rng = np.random.default_rng(0)
    xs = [ts.asarray(rng.standard_normal((B, H, T, E)).astype(np.float32)).astype(
        getattr(ts, dtype)).to("cuda").requires_grad_(True) for _ in range(3)]
    g = ts.ones((B, H, T, E), dtype=getattr(ts, dtype), device="cuda")
    settings = A.attention_settings(flash_on_cuda=path == "flash",
                                    causal_block=1 << 40 if path == "matmul"
                                    else A.attention_settings()["causal_block"])
    settings.__enter__()

    def fwd() -> Any:
        with ts.no_grad():
            return F.scaled_dot_product_attention(*xs, is_causal=causal)

    def step() -> None:
        F.scaled_dot_product_attention(*xs, is_causal=causal).backward(g)

    try:
        return timeit(fwd, ts.cuda.synchronize, iters), timeit(step, ts.cuda.synchronize, iters)
    finally:
        settings.__exit__(None, None, None)


def bench_torch(shape: tuple, dtype: str, iters: int) -> tuple:
    import torch
    B, H, T, E, causal = shape
    xs = [torch.randn(B, H, T, E, device="cuda", dtype=getattr(torch, dtype),
                      requires_grad=True) for _ in range(3)]
    g = torch.ones(B, H, T, E, device="cuda", dtype=getattr(torch, dtype))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def fwd() -> Any:
        with torch.no_grad():
            return sdpa(*xs, is_causal=causal)

    def step() -> None:
        sdpa(*xs, is_causal=causal).backward(g)

    return timeit(fwd, torch.cuda.synchronize, iters), timeit(step, torch.cuda.synchronize, iters)


def main() -> None:
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    try:
        import torch  # noqa: F401
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    paths = ("flash", "block", "matmul")
    print("| shape (B, H, T, E, causal) | dtype | "
          + " | ".join(f"{p} fwd | {p} fwd+bwd" for p in paths + ("torch",)) + " |")
    print("|---|---|" + "---|---|" * (len(paths) + 1))
    for shape in SHAPES:
        for dtype in ("float32", "bfloat16"):
            res = [bench_tessera(shape, dtype, p, iters) for p in paths]
            if not shape[-1]:  # without a causal mask "block" is the matmul path
                res[1] = (float("nan"),) * 2
            res.append(bench_torch(shape, dtype, iters) if have_torch else (float("nan"),) * 2)
            print(f"| {shape} | {dtype} | "
                  + " | ".join(f"{x:.3f} ms" for r in res for x in r) + " |")


if __name__ == "__main__":
    main()
