"""Shared timing helpers: every case runs the same work in tessera, NumPy and PyTorch in one
process with the same thread count, and reports medians and ratios."""
from __future__ import annotations

import os
import platform
import statistics
import time
import argparse
import sys
from typing import Callable, Dict, List, Optional


def calls_per_sample(fn: Callable[[], object], min_time: float = 0.2, repeats: int = 7) -> int:
    """Calls per timed sample: enough that one sample lasts at least ~min_time/repeats."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > min_time / repeats or n > 1_000_000:
            return n
        n *= 4


def sample(fn: Callable[[], object], n: int) -> float:
    """Seconds per call over n back-to-back calls."""
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def timeit(fn: Callable[[], object], min_time: float = 0.2, repeats: int = 7) -> float:
    """Median seconds per call over `repeats` samples."""
    n = calls_per_sample(fn, min_time, repeats)
    return statistics.median(sample(fn, n) for _ in range(repeats))


def fmt_time(s: Optional[float]) -> str:
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(rows: List[Dict[str, object]]) -> str:
    out = ["| case | tessera | NumPy | PyTorch | NumPy/tessera | PyTorch/tessera |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        t, n, p = r["ts"], r["np"], r["torch"]
        rn = f"{n / t:.2f}×" if t and n else "n/a"
        rp = f"{p / t:.2f}×" if t and p else "n/a"
        out.append(f"| {r['case']} | {fmt_time(t)} | {fmt_time(n)} | {fmt_time(p)} | {rn} | {rp} |")
    return "\n".join(out)


def emit(md: str, path: Optional[str]) -> int:
    """Prints the table and writes it to `path` when given (a benchmark's last step)."""
    print(md)
    if path:
        with open(path, "w") as f:
            f.write(md + "\n")
    return 0


def run_case(name: str, fns: Dict[str, Optional[Callable]], min_time: float,
             repeats: int = 7) -> Dict[str, object]:
    """Times one case in every library that has it (None where an op is missing). The
    libraries' samples alternate (tessera, NumPy, PyTorch, tessera, ...), so a change in the
    machine's state during the case (a noisy neighbour on a shared VM) shifts all three alike
    and the ratios stay fair; each reports its median."""
    row: Dict[str, object] = {"case": name}
    calls: Dict[str, int] = {}
    for lib in ("ts", "np", "torch"):
        fn = fns.get(lib)
        row[lib] = None
        try:
            if fn:
                calls[lib] = calls_per_sample(fn, min_time, repeats)
        except (AttributeError, NotImplementedError, TypeError) as e:
            print(f"  {lib}: {name}: {e}", file=sys.stderr)
    samples: Dict[str, List[float]] = {lib: [] for lib in calls}
    for _ in range(repeats):
        for lib, n in calls.items():
            samples[lib].append(sample(fns[lib], n))
    for lib, ts_ in samples.items():
        row[lib] = statistics.median(ts_)
    print(f"{name}: " + ", ".join(f"{k}={row[k]}" for k in ("ts", "np", "torch")), file=sys.stderr)
    return row


def bench_main(doc: str, make_cases: Callable[[bool], list]) -> int:
    """The command line every benchmark shares: --threads, --quick, --min-time, --markdown."""
    import numpy as np
    import torch

    import tessera as ts

    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--markdown", default=None, help="write the table to this file")
    args = ap.parse_args()
    threads = args.threads or ts.get_num_threads()
    ts.set_num_threads(threads)
    torch.set_num_threads(threads)
    rows = [run_case(name, fns, args.min_time) for name, fns in make_cases(args.quick)]
    head = (f"Machine: {machine()}; threads: {threads}; tessera {ts.__version__}, NumPy {np.__version__}, "
            f"PyTorch {torch.__version__}. Ratios > 1 mean tessera is faster.")
    md = head + "\n\n" + table(rows)
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md + "\n")
    return 0
