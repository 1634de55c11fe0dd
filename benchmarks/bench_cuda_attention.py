"""Usage: bench_cuda_attention.py [iters] [--quick]. Time of F.scaled_dot_product_attention
forward and forward+backward on CUDA (synchronized wall clock, median) at the char-GPT shape
(B=64, H=6, T=256, head dim 64, causal; also with dropout 0.2 as nanoGPT's shakespeare-char
trains), GPT-2 small's (B=8, H=12, T=1024, head dim 64, causal) and a few others, float32 and
bfloat16, by path: "cudnn" (the fused kernel with cuDNN's attention allowed: the default on
CUDA; the column notes when tessera's kernel ran instead), "flash" (tessera's own fused kernel,
ts.backends.cuda.enable_cudnn_sdp(False)), "block" (causal GEMMs on the block lower triangle,
Note [Causal block attention]), "matmul" (full GEMMs + the fused softmax), and PyTorch when
installed. --quick: only the GPT-2 and char-GPT-with-dropout cases in bfloat16, paths cudnn,
flash and PyTorch."""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

import numpy as np

import tessera as ts
from tessera.nn import functional as F
from tessera.nn.functional import attention as A

# (B, H, T, E, causal, dropout_p)
SHAPES = [(64, 6, 256, 64, True, 0.0), (64, 6, 256, 64, True, 0.2), (64, 6, 256, 64, False, 0.0),
          (8, 12, 1024, 64, True, 0.0), (16, 12, 1024, 64, True, 0.0),
          (32, 8, 512, 128, True, 0.0)]
QUICK = [(8, 12, 1024, 64, True, 0.0), (64, 6, 256, 64, True, 0.2)]


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
    B, H, T, E, causal, p = shape
    rng = np.random.default_rng(0)
    xs = [ts.asarray(rng.standard_normal((B, H, T, E)).astype(np.float32)).astype(
        getattr(ts, dtype)).to("cuda").requires_grad_(True) for _ in range(3)]
    g = ts.ones((B, H, T, E), dtype=getattr(ts, dtype), device="cuda")
    saved_cudnn = ts.backends.cuda.cudnn_sdp_enabled()
    settings = A.attention_settings(flash_on_cuda=path in ("flash", "cudnn"),
                                    causal_block=1 << 40 if path == "matmul"
                                    else A.attention_settings()["causal_block"])
    settings.__enter__()
    ts.backends.cuda.enable_cudnn_sdp(path == "cudnn")

    def fwd() -> Any:
        with ts.no_grad():
            return F.scaled_dot_product_attention(*xs, is_causal=causal, dropout_p=p)

    def step() -> None:
        F.scaled_dot_product_attention(*xs, is_causal=causal, dropout_p=p).backward(g)

    try:
        res = timeit(fwd, ts.cuda.synchronize, iters), timeit(step, ts.cuda.synchronize, iters)
        return res + (ts.backends.cuda.last_attention_path(),)
    finally:
        settings.__exit__(None, None, None)
        ts.backends.cuda.enable_cudnn_sdp(saved_cudnn)


def bench_torch(shape: tuple, dtype: str, iters: int) -> tuple:
    import torch
    B, H, T, E, causal, p = shape
    xs = [torch.randn(B, H, T, E, device="cuda", dtype=getattr(torch, dtype),
                      requires_grad=True) for _ in range(3)]
    g = torch.ones(B, H, T, E, device="cuda", dtype=getattr(torch, dtype))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def fwd() -> Any:
        with torch.no_grad():
            return sdpa(*xs, is_causal=causal, dropout_p=p)

    def step() -> None:
        sdpa(*xs, is_causal=causal, dropout_p=p).backward(g)

    return (timeit(fwd, torch.cuda.synchronize, iters),
            timeit(step, torch.cuda.synchronize, iters), "torch")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    iters = int(args[0]) if args else 20
    try:
        import torch  # noqa: F401
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    paths = ("cudnn", "flash") if quick else ("cudnn", "flash", "block", "matmul")
    nan = (float("nan"), float("nan"), "-")
    print("| shape (B, H, T, E, causal, dropout) | dtype | "
          + " | ".join(f"{p} fwd | {p} fwd+bwd" for p in paths + ("torch",)) + " |")
    print("|---|---|" + "---|---|" * (len(paths) + 1))
    for shape in QUICK if quick else SHAPES:
        for dtype in ("bfloat16",) if quick else ("float32", "bfloat16"):
            res = [bench_tessera(shape, dtype, p, iters) for p in paths]
            if not quick and (not shape[4] or shape[5]):  # "block" is the matmul path there
                res[2] = nan
            res.append(bench_torch(shape, dtype, iters) if have_torch else nan)
            cells = []
            for name, (f, b, ran) in zip(paths + ("torch",), res):
                note = f" ({ran})" if name == "cudnn" and ran != "cudnn" else ""
                cells += [f"{f:.3f} ms{note}", f"{b:.3f} ms"]
            print(f"| {shape} | {dtype} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
