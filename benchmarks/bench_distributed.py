"""Distributed benchmarks, tessera vs PyTorch on NCCL, one process per GPU.

  python -m tessera.distributed.run --no-mpiexec --nproc-per-node N \
      benchmarks/bench_distributed.py --lib tessera|torch --what allreduce|gpt [--out FILE]

allreduce: all_reduce of --mib MiB float32 (default 1 GiB); prints the bus bandwidth
(2 (n-1)/n x bytes / time, NCCL's definition), median of --reps after warm-up.
--device cpu measures the CPU backends instead (tessera's MPI, PyTorch's gloo).
gpt: a DDP training step of the GPT-2-small shape (12 layers, 12 heads, 768 channels, context
1024, batch 8 per GPU, vocab 50304, bfloat16 autocast, AdamW) timed with CUDA events; run it
with N=1 too for the scaling efficiency (per-GPU throughput against one GPU).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lib", choices=["tessera", "torch"], default="tessera")
    p.add_argument("--what", choices=["allreduce", "gpt"], default="allreduce")
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cpu: the gloo backend (tessera: MPI) on CPU tensors")
    p.add_argument("--out", default=None, help="append one JSON line of results here")
    a = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    if a.lib == "torch":
        import torch as M
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        if a.device == "cuda":
            M.cuda.set_device(local)
    else:
        import tessera as M
        import tessera.distributed as dist
        from tessera.nn.parallel import DistributedDataParallel as DDP
        if a.device == "cuda":
            M.cuda.set_device(local)
    dist.init_process_group("nccl" if a.device == "cuda" else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = f"cuda:{local}" if a.device == "cuda" else "cpu"
    sync = M.cuda.synchronize if a.device == "cuda" else (lambda: None)
    result = {"lib": a.lib, "what": a.what, "world": world, "device": a.device}
    if a.what == "allreduce":
        n = a.mib * 1024 * 1024 // 4
        x = M.ones((n,), dtype=M.float32, device=dev)
        for _ in range(3):
            dist.all_reduce(x)
        sync()
        times = []
        for _ in range(a.reps):
            dist.barrier()
            sync()
            t0 = time.perf_counter()
            dist.all_reduce(x)
            sync()
            times.append(time.perf_counter() - t0)
        t = float(np.median(times))
        busbw = 2 * (world - 1) / world * n * 4 / t / 1e9
        result.update(mib=a.mib, ms=t * 1e3, busbw_gbs=busbw)
    else:
        from bench_cuda_gpt import build
        nn, F = M.nn, M.nn.functional
        M.manual_seed(0)
        vocab, block = 50304, 1024
        model = build(nn, F, vocab, a.layers, 12, 768, block).to(dev)
        if world > 1:
            model = DDP(model, device_ids=[local])
        opt = M.optim.AdamW(model.parameters(), lr=1e-4)
        rng = np.random.default_rng(rank)
        idx = M.asarray(rng.integers(0, vocab, (a.batch, block)), device=dev)
        tgt = M.asarray(rng.integers(0, vocab, (a.batch * block,)), device=dev)
        pos = M.asarray(np.arange(block), device=dev)

        def step():
            opt.zero_grad()
            with M.autocast("cuda", dtype=M.bfloat16):
                loss = F.cross_entropy(model(idx, pos).reshape(-1, vocab), tgt)
            loss.backward()
            opt.step()

        for _ in range(3):
            step()
        M.cuda.synchronize()
        times = []
        for _ in range(a.reps):
            s, e = M.cuda.Event(enable_timing=True), M.cuda.Event(enable_timing=True)
            s.record()
            step()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        result.update(ms=float(np.median(times)), tokens_per_s_per_gpu=a.batch * block /
                      (float(np.median(times)) / 1e3), layers=a.layers, batch=a.batch)
    if rank == 0:
        line = json.dumps(result)
        print(line, flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(line + "\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
