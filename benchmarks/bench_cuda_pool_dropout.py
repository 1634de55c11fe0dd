"""Kernel timings for issue 18's channels-last pools and issue 19's attention dropout on CUDA,
tessera against PyTorch in one process (CUDA events, median of --reps calls):

- pools: forward + backward of the ResNet-18 pools (adaptive average to 1x1 of the last stage,
  a 3x3/2 max pool of the ImageNet stem, a 2x2 average pool) in both memory formats; with
  channels-last inputs tessera's kernels read and write NHWC directly (Note [CUDA
  channels-last pools]), so the two formats should cost about the same.
- attention: F.scaled_dot_product_attention forward + backward at nanoGPT's shakespeare-char
  shape (B=64, H=6, T=256, head 64, causal) and GPT-2 small's (B=8, H=12, T=1024, head 64),
  dropout 0 and 0.2; the dropout overhead (ms with dropout - ms without) is what Note
  [Attention dropout mask] cuts (one Philox call per four scores).

Usage (GPU machine): PYTHONPATH=python python benchmarks/bench_cuda_pool_dropout.py
    [--reps N] [--markdown FILE] [--only pools|attention]
"""
from __future__ import annotations

import argparse
from typing import Any, Callable, Dict, List

import numpy as np

import tessera as ts


def timed(lib: Any, fn: Callable[[], object], reps: int) -> float:
    from bench_cuda import cuda_time
    return cuda_time(fn, lib.cuda.synchronize, lambda: lib.cuda.Event(enable_timing=True), reps)


POOLS = [
    # (name, shape, F call)
    ("adaptive_avg_pool2d 1x1", (256, 512, 4, 4), lambda F, x: F.adaptive_avg_pool2d(x, 1)),
    ("max_pool2d 3x3/2 pad 1", (256, 64, 32, 32), lambda F, x: F.max_pool2d(x, 3, 2, 1)),
    ("avg_pool2d 2x2", (256, 128, 16, 16), lambda F, x: F.avg_pool2d(x, 2)),
]


def pool_rows(reps: int) -> List[Dict[str, Any]]:
    import torch
    rows = []
    for name, shape, call in POOLS:
        for dtype in ["float32", "bfloat16"]:
            for cl in [False, True]:
                x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
                res = {}
                for lib, M in [("torch", torch), ("tessera", ts)]:
                    xt = M.asarray(x, device="cuda").to(getattr(M, dtype)) if lib == "tessera" \
                        else torch.tensor(x, device="cuda").to(getattr(torch, dtype))
                    if cl:
                        xt = xt.to(memory_format=M.channels_last)
                    xt = xt.detach().requires_grad_(True)
                    F = M.nn.functional
                    y0 = call(F, xt)
                    g = M.ones_like(y0)

                    def step(xt=xt, F=F, g=g) -> None:
                        y = call(F, xt)
                        y.backward(g)
                        xt.grad = None

                    y = call(F, xt)
                    y.backward(g)
                    fmt = M.channels_last if cl else M.contiguous_format
                    keeps = y.is_contiguous(memory_format=fmt) and \
                        xt.grad.is_contiguous(memory_format=fmt)
                    xt.grad = None
                    res[lib] = (timed(M, step, reps), keeps)
                rows.append(dict(case=name, shape=str(shape), dtype=dtype,
                                 layout="channels_last" if cl else "contiguous",
                                 torch_ms=res["torch"][0], tessera_ms=res["tessera"][0],
                                 speed=res["torch"][0] / res["tessera"][0],
                                 layout_kept=res["tessera"][1]))
                r = rows[-1]
                print(f"{name:26s} {dtype:8s} {r['layout']:13s} torch {r['torch_ms']:.3f} ms "
                      f"tessera {r['tessera_ms']:.3f} ms ({r['speed']:.2f}x) "
                      f"layout kept: {r['layout_kept']}", flush=True)
    return rows


ATTENTION = [("nanogpt-char", 64, 6, 256, 64), ("gpt2-small", 8, 12, 1024, 64)]


def attention_rows(reps: int) -> List[Dict[str, Any]]:
    """Each case on tessera's default path (cuDNN's fused attention where it applies, else
    tessera's flash kernels) and, where that was cuDNN, again on the flash kernels."""
    import torch
    rows = []
    cudnn_on = ts.backends.cuda.cudnn_sdp_enabled()
    default_path: Dict[Any, str] = {}
    for name, B, H, T, D in ATTENTION:
        for dtype in ["float32", "bfloat16"]:
            for p, force_flash in [(0.0, False), (0.2, False), (0.0, True), (0.2, True)]:
                if force_flash and (not cudnn_on or
                                    default_path.get((name, dtype, p)) == "cuda_flash"):
                    continue  # the default path was tessera's flash kernels: measured already
                ts.backends.cuda.enable_cudnn_sdp(cudnn_on and not force_flash)
                res = {}
                for lib, M in [("torch", torch), ("tessera", ts)]:
                    r = np.random.default_rng(1)
                    q, k, v = (M.asarray(r.standard_normal((B, H, T, D)).astype(np.float32),
                                         device="cuda").to(getattr(M, dtype))
                               .requires_grad_(True) for _ in range(3))
                    F = M.nn.functional
                    g = M.ones((B, H, T, D), device="cuda", dtype=getattr(M, dtype))

                    def step(q=q, k=k, v=v, F=F, g=g) -> None:
                        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
                        y.backward(g)
                        q.grad = k.grad = v.grad = None

                    res[lib] = timed(M, step, reps)
                path = ts.backends.cuda.last_attention_path()
                if not force_flash:
                    default_path[(name, dtype, p)] = path
                rows.append(dict(case=f"sdpa {name} (B={B}, H={H}, T={T}, D={D}) causal",
                                 dtype=dtype, dropout=p, tessera_path=path, torch_ms=res["torch"],
                                 tessera_ms=res["tessera"],
                                 speed=res["torch"] / res["tessera"]))
                print(f"{rows[-1]['case']:48s} {dtype:8s} p={p} {path:10s} torch "
                      f"{res['torch']:.3f} ms tessera {res['tessera']:.3f} ms "
                      f"({rows[-1]['speed']:.2f}x)", flush=True)
    ts.backends.cuda.enable_cudnn_sdp(cudnn_on)
    return rows


def markdown(rows: List[Dict[str, Any]]) -> str:
    keys = [k for k in rows[0] if k not in ("torch_ms", "tessera_ms", "speed")]
    out = ["| " + " | ".join(keys + ["torch ms", "tessera ms", "speed vs torch"]) + " |",
           "|" + "---|" * (len(keys) + 3)]
    for r in rows:
        out.append("| " + " | ".join(str(r[k]) for k in keys) +
                   f" | {r['torch_ms']:.3f} | {r['tessera_ms']:.3f} | {r['speed']:.2f}x |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--markdown", help="write the tables here")
    ap.add_argument("--only", choices=["pools", "attention"])
    args = ap.parse_args()
    text = ""
    if args.only in (None, "pools"):
        rows = pool_rows(args.reps)
        text += "### Pools, forward + backward\n\n" + markdown(rows) + "\n"
    if args.only in (None, "attention"):
        rows = attention_rows(args.reps)
        text += "### Attention forward + backward, dropout in the kernel\n\n" + markdown(rows)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
