"""Distributed benchmarks, tessera vs PyTorch on NCCL, one process per GPU.

  python -m tessera.distributed.run --no-mpiexec --nproc-per-node N \
      benchmarks/bench_distributed.py --lib tessera|torch --what allreduce,gpt,zero,fsdp \
      [--out FILE]

--what runs its stages in order in one process (one NCCL initialization); each appends one
JSON line to --out (rank 0) as soon as it is done, so a later stage failing loses nothing:
  allreduce  all_reduce of --mib MiB float32 (default 1 GiB): bus bandwidth
             (2 (n-1)/n x bytes / time, NCCL's definition), median of --reps after warm-up.
  gpt        a training step of the GPT-2-small shape (12 layers, 12 heads, 768 channels,
             context 1024, batch --batch per GPU, vocab 50304, bfloat16 autocast, AdamW) with
             DDP (without it on one GPU: the baseline of the scaling efficiency).
  zero       the same step with DDP and ZeroRedundancyOptimizer(AdamW): optimizer-state bytes
             per GPU (largest over ranks) against the unsharded AdamW's, step time.
  fsdp       the same step with FullyShardedDataParallel (FULL_SHARD, one unit per block, the
             rest in the root unit) and AdamW on the shards.
Steps are timed with CUDA events, median of --reps after 3 warm-up steps; the peak memory
(max_memory_allocated, largest over ranks) is reported too. --device cpu runs the stages on
the CPU backends instead (tessera's MPI, PyTorch's gloo; the GPT stages with wall-clock times
and no memory figures: a smoke run, e.g. --layers 1 --batch 1 --block 64 --vocab 512).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", choices=["tessera", "torch"], default="tessera")
    p.add_argument("--what", default="allreduce",
                   help="comma-separated stages: allreduce, gpt, zero, fsdp")
    p.add_argument("--mib", type=int, default=1024)
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--block", type=int, default=1024, help="context (a smaller one for smoke runs)")
    p.add_argument("--vocab", type=int, default=50304)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cpu: the gloo backend (tessera: MPI) on CPU tensors")
    p.add_argument("--out", default=None, help="append one JSON line per stage here")
    a = p.parse_args()
    stages = [s.strip() for s in a.what.split(",") if s.strip()]
    bad = [s for s in stages if s not in ("allreduce", "gpt", "zero", "fsdp")]
    if bad:
        p.error(f"unknown stage(s) {bad}")
    local = int(os.environ.get("LOCAL_RANK", 0))
    if a.lib == "torch":
        import torch as M
        import torch.distributed as dist
    else:
        import tessera as M
        import tessera.distributed as dist
    if a.device == "cuda":
        M.cuda.set_device(local)
    dist.init_process_group("nccl" if a.device == "cuda" else "gloo",
                            timeout=__import__("datetime").timedelta(seconds=180))
    rank, world = dist.get_rank(), dist.get_world_size()
    dev = f"cuda:{local}" if a.device == "cuda" else "cpu"

    def emit(result: dict) -> None:
        result = {"lib": a.lib, "world": world, "device": a.device, **result}
        if rank == 0:
            line = json.dumps(result)
            print(line, flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(line + "\n")

    unsharded_state = None
    for stage in stages:
        try:
            if stage == "allreduce":
                emit(bench_allreduce(M, dist, a, world, dev))
            elif stage == "gpt" or world > 1:
                r = bench_gpt(M, dist, a, stage, rank, world, local, dev)
                if stage == "gpt":
                    unsharded_state = r["optimizer_state_bytes_per_gpu"]
                elif unsharded_state:
                    r["unsharded_state_bytes_per_gpu"] = unsharded_state
                    r["state_fraction"] = r["optimizer_state_bytes_per_gpu"] / unsharded_state
                emit(r)
        except Exception as e:  # report, and go on with the next stage
            traceback.print_exc()
            emit({"what": stage, "error": f"{type(e).__name__}: {e}"[:500]})
        gc.collect()
        if a.device == "cuda":
            M.cuda.synchronize()
            M.cuda.empty_cache()
    dist.destroy_process_group()


def bench_allreduce(M, dist, a, world: int, dev: str) -> dict:
    sync = M.cuda.synchronize if a.device == "cuda" else (lambda: None)
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
    del x
    return {"what": "allreduce", "mib": a.mib, "ms": t * 1e3, "busbw_gbs": busbw}


def _state_bytes(opt) -> int:
    """Bytes of the tensors this rank's optimizer keeps as state (ZeRO: its partition)."""
    inner = getattr(opt, "optim", opt)
    total = 0
    for s in inner.state_dict()["state"].values():
        for t in s.values():
            if hasattr(t, "numel") and t.ndim > 0:
                total += t.numel() * t.element_size()
    return total


def _max_over_ranks(M, dist, value: float, dev: str) -> float:
    t = M.tensor([float(value)], dtype=M.float64, device=dev)
    dist.all_reduce(t, dist.ReduceOp.MAX)
    return float(t.cpu()[0])


def bench_gpt(M, dist, a, kind: str, rank: int, world: int, local: int, dev: str) -> dict:
    from bench_cuda_gpt import build
    nn, F = M.nn, M.nn.functional
    M.manual_seed(0)
    vocab, block = a.vocab, a.block
    cuda = a.device == "cuda"
    model = build(nn, F, vocab, a.layers, 12, 768, block).to(dev)
    block_cls = type(model.blocks[0])
    if a.lib == "torch":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        from torch.nn.parallel import DistributedDataParallel as DDP
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    else:
        from tessera.distributed.optim import ZeroRedundancyOptimizer
        from tessera.nn.parallel import DistributedDataParallel as DDP
        from tessera.distributed.fsdp import FullyShardedDataParallel as FSDP
        from tessera.distributed.fsdp import ModuleWrapPolicy
    if kind == "fsdp":
        model = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({block_cls}),
                     device_id=local if cuda else None)
    elif world > 1:
        model = DDP(model, device_ids=[local] if cuda else None)
    if kind == "zero":
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=M.optim.AdamW,
                                      lr=1e-4)
    else:
        opt = M.optim.AdamW(model.parameters(), lr=1e-4)
    rng = np.random.default_rng(rank)
    idx = M.asarray(rng.integers(0, vocab, (a.batch, block)), device=dev)
    tgt = M.asarray(rng.integers(0, vocab, (a.batch * block,)), device=dev)
    pos = M.asarray(np.arange(block), device=dev)

    def step() -> None:
        opt.zero_grad()
        with M.autocast("cuda" if cuda else "cpu", dtype=M.bfloat16):
            loss = F.cross_entropy(model(idx, pos).reshape(-1, vocab), tgt)
        loss.backward()
        opt.step()

    if cuda:
        M.cuda.reset_peak_memory_stats()
    for _ in range(3):
        step()
    if cuda:
        M.cuda.synchronize()
    times = []
    for _ in range(a.reps):
        if not cuda:
            t0 = time.perf_counter()
            step()
            times.append((time.perf_counter() - t0) * 1e3)
            continue
        s, e = M.cuda.Event(enable_timing=True), M.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    ms = float(np.median(times))
    peak = _max_over_ranks(M, dist, M.cuda.max_memory_allocated() if cuda else 0, dev)
    state = _max_over_ranks(M, dist, _state_bytes(opt), dev)
    return {"what": kind, "ms": ms, "ms_all": [round(t, 3) for t in times],
            "tokens_per_s_per_gpu": a.batch * block / (ms / 1e3), "layers": a.layers,
            "batch": a.batch, "peak_mib_per_gpu": peak / 2**20,
            "optimizer_state_bytes_per_gpu": int(state)}


if __name__ == "__main__":
    main()
