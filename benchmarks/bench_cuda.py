"""CUDA benchmarks: tessera vs PyTorch CUDA in one process, timed with CUDA events (medians).

Run on a GPU machine:  PYTHONPATH=python python benchmarks/bench_cuda.py [--markdown out.md]
Bandwidth figures count bytes read + bytes written once each.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, List, Tuple

import tessera as ts
import torch


def cuda_time(fn: Callable[[], object], sync: Callable[[], None], event, reps: int = 20) -> float:
    """Median milliseconds of fn() between two events on the current stream."""
    for _ in range(3):
        fn()
    sync()
    samples = []
    for _ in range(reps):
        a, b = event(), event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        samples.append(a.elapsed_time(b))
    return statistics.median(samples)


def ts_time(fn: Callable[[], object], reps: int = 20) -> float:
    return cuda_time(fn, ts.cuda.synchronize, lambda: ts.cuda.Event(enable_timing=True), reps)


def torch_time(fn: Callable[[], object], reps: int = 20) -> float:
    return cuda_time(fn, torch.cuda.synchronize, lambda: torch.cuda.Event(enable_timing=True), reps)


def host_us(fn: Callable[[], object], sync: Callable[[], None], n: int = 2000) -> float:
    """Median host microseconds per call of a tiny op (launch overhead)."""
    for _ in range(200):
        fn()
    sync()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n * 1e6)
        sync()
    return statistics.median(samples)


Row = Tuple[str, str, str, str, str]


def elementwise_rows(n: int) -> List[Row]:
    rows: List[Row] = []
    xt = torch.randn(n, device="cuda")
    yt = torch.randn(n, device="cuda")
    x = ts.from_dlpack(xt)
    y = ts.from_dlpack(yt)
    gb = n * 4 / 1e9
    copy_ms = torch_time(lambda: xt.clone())
    rows.append(("copy (torch clone) 2^28 f32", "-", f"{copy_ms:.3f}", "-",
                 f"{2 * gb / copy_ms:.2f} TB/s"))
    for name, f_ts, f_t, nbytes in [
        ("add 2^28 f32", lambda: x + y, lambda: xt + yt, 3 * gb),
        ("mul 2^28 f32", lambda: x * y, lambda: xt * yt, 3 * gb),
        ("exp 2^28 f32", lambda: ts.exp(x), lambda: torch.exp(xt), 2 * gb),
        ("x * 2.5 (scalar) 2^28 f32", lambda: x * 2.5, lambda: xt * 2.5, 2 * gb),
        ("sum 2^28 f32", lambda: ts.sum(x), lambda: torch.sum(xt), gb),
    ]:
        a, b = ts_time(f_ts), torch_time(f_t)
        rows.append((name, f"{a:.3f}", f"{b:.3f}", f"{b / a:.2f}",
                     f"{nbytes / a:.2f} TB/s ({nbytes / a / (2 * gb / copy_ms) * 100:.0f}% of copy)"))
    del x, y, xt, yt
    m = 16384
    at = torch.randn(m, m, device="cuda")
    bt = torch.randn(m, m, device="cuda")
    a_, b_ = ts.from_dlpack(at), ts.from_dlpack(bt)
    c = ts_time(lambda: a_ + b_)
    t = ts_time(lambda: a_ + a_.T)
    tt = torch_time(lambda: at + at.T)
    rows.append((f"a + a.T {m}^2 f32", f"{t:.3f}", f"{tt:.3f}", f"{tt / t:.2f}",
                 f"{t / c:.2f}x the contiguous a + b ({c:.3f} ms)"))
    rows.append((f"sum(axis=0) {m}^2 f32", f"{ts_time(lambda: ts.sum(a_, axis=0)):.3f}",
                 f"{torch_time(lambda: at.sum(0)):.3f}", "", ""))
    rows[-1] = rows[-1][:3] + (f"{float(rows[-1][2]) / float(rows[-1][1]):.2f}", "")
    rows.append((f"sum(axis=1) {m}^2 f32", f"{ts_time(lambda: ts.sum(a_, axis=1)):.3f}",
                 f"{torch_time(lambda: at.sum(1)):.3f}", "", ""))
    rows[-1] = rows[-1][:3] + (f"{float(rows[-1][2]) / float(rows[-1][1]):.2f}", "")
    return rows


def matmul_rows() -> List[Row]:
    rows: List[Row] = []
    for n in (4096, 8192):
        for label, tdt, sdt, tf32 in [("f32", torch.float32, ts.float32, False),
                                      ("tf32", torch.float32, ts.float32, True),
                                      ("bf16", torch.bfloat16, ts.bfloat16, False)]:
            at = torch.randn(n, n, device="cuda").to(tdt)
            bt = torch.randn(n, n, device="cuda").to(tdt)
            a, b = ts.from_dlpack(at), ts.from_dlpack(bt)
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ts.backends.cuda.matmul.allow_tf32 = tf32
            x, y = ts_time(lambda: a @ b, 10), torch_time(lambda: at @ bt, 10)
            tflops = 2 * n ** 3 / (x * 1e-3) / 1e12
            rows.append((f"matmul {n} {label}", f"{x:.3f}", f"{y:.3f}", f"{y / x:.2f}",
                         f"{tflops:.0f} TFLOP/s"))
    torch.backends.cuda.matmul.allow_tf32 = False
    ts.backends.cuda.matmul.allow_tf32 = False
    return rows


def overhead_rows() -> List[Row]:
    a, b = ts.ones(1, device="cuda"), ts.ones(1, device="cuda")
    at, bt = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
    x = host_us(lambda: a + b, ts.cuda.synchronize)
    y = host_us(lambda: at + bt, torch.cuda.synchronize)
    rows = [("tiny add host overhead (µs)", f"{x:.2f}", f"{y:.2f}", f"{y / x:.2f}", "")]
    x = host_us(lambda: a * 2.0, ts.cuda.synchronize)
    y = host_us(lambda: at * 2.0, torch.cuda.synchronize)
    rows.append(("tiny x * 2.0 host overhead (µs)", f"{x:.2f}", f"{y:.2f}", f"{y / x:.2f}", ""))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--markdown", default=None)
    p.add_argument("--n", type=int, default=1 << 28)
    args = p.parse_args()
    rows = [("case", "tessera ms", "torch ms", "speed vs torch", "note")]
    rows += overhead_rows()
    rows += elementwise_rows(args.n)
    rows += matmul_rows()
    dev = ts.cuda.get_device_name()
    lines = [f"device: {dev}, torch {torch.__version__}", "",
             "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
