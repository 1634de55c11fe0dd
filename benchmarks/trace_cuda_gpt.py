"""Usage: trace_cuda_gpt.py [tessera|torch] [--amp] [--config nanogpt-char|gpt2-small] [rows].

Where the GPU time of one nanoGPT training step goes, by launching Python line: the step runs
under torch.profiler with CUDA activity and the Python tracer (with_stack), the chrome trace is
read back, and each kernel's time is charged to the innermost Python frames (outside tessera's
and torch's own packages) that enclose its launch. Prints the table of (kernel, caller) rows by
GPU time. Run on a GPU machine with PyTorch installed."""
from __future__ import annotations

import bisect
import collections
import json
import os
import sys
import tempfile

from bench_cuda_gpt import CONFIGS, make_nanogpt_step


def trace(lib: str, amp: bool, config: str) -> list:
    import torch
    from torch.profiler import ProfilerActivity, profile

    M = torch if lib == "torch" else __import__("tessera")
    _, step = make_nanogpt_step(M, CONFIGS[config], amp)
    for _ in range(3):
        step()
    M.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True) as prof:
        step()
        M.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        return json.load(f)["traceEvents"]


def summarize(events: list, rows: int) -> None:
    kernels = [e for e in events if e.get("cat") == "kernel"]
    launches = {e["args"].get("correlation"): e for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    py = sorted((e for e in events if e.get("cat") == "python_function" and e.get("ph") == "X"),
                key=lambda e: e["ts"])
    starts = [e["ts"] for e in py]

    def callers(ts: float, tid) -> str:
        # innermost enclosing frames of the model's code (skip library internals)
        i = bisect.bisect_right(starts, ts)
        chain = []
        for e in reversed(py[max(0, i - 4000):i]):
            if e["tid"] != tid or e["ts"] + e.get("dur", 0) < ts:
                continue
            name = e["name"]
            if any(s in name for s in ("site-packages", "python/tessera/", "/torch/", "<built-in", "profiler")):
                continue
            chain.append(name.split("/")[-1][:60])
            if len(chain) == 2:
                break
        return " < ".join(chain) or "?"

    by = collections.defaultdict(lambda: [0.0, 0])
    total = 0.0
    for k in kernels:
        launch = launches.get(k["args"].get("correlation"))
        where = callers(launch["ts"], launch["tid"]) if launch else "?"
        key = (k["name"][:70], where)
        by[key][0] += k.get("dur", 0)
        by[key][1] += 1
        total += k.get("dur", 0)
    print(f"GPU kernel time {total / 1000:.2f} ms in {len(kernels)} kernels")
    for (name, where), (dur, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:rows]:
        print(f"{dur:9.1f} us {n:4d}x  {name:70s}  {where}")


def main() -> None:
    config = sys.argv[sys.argv.index("--config") + 1] if "--config" in sys.argv else "nanogpt-char"
    pos = [a for a in sys.argv[1:] if not a.startswith("--") and a != config]
    lib = pos[0] if pos else "tessera"
    rows = int(pos[1]) if len(pos) > 1 else 50
    print(f"--- {lib} {config} {'bf16 autocast' if '--amp' in sys.argv else 'float32'}")
    summarize(trace(lib, "--amp" in sys.argv, config), rows)


if __name__ == "__main__":
    main()
