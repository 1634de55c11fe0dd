"""CNN training on CUDA, tessera against PyTorch in one process (CUDA events, medians):

* the ResNet-18 CIFAR-form training step (examples/resnet.py's builder, the same network in
  both; batch 256 of 3x32x32, SGD with momentum, cross entropy) in float32 and under bfloat16
  autocast, channels-first and channels-last: step time and peak allocated memory;
* forward+backward (input and weight gradients) of each distinct ResNet-18 convolution shape
  at batch 256 (float32 and bfloat16), and of depthwise 3x3 MobileNet shapes.

tessera's rows say which path its convolutions took (cuDNN, or its own GEMM/depthwise
kernels); ``--no-cudnn`` forces its fallback kernels, ``--both`` adds fallback rows for the
float32 step and the shapes. Prints a markdown table; ``--out`` writes the numbers as JSON.

    PYTHONPATH=python python benchmarks/bench_cuda_cnn.py --out cnn.json [--quick] [--both]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "examples"))

import tessera as ts  # noqa: E402
import torch  # noqa: E402
from bench_cnn import RESNET18_CONVS  # noqa: E402  (C_in, C_out, H, kernel, stride)
from bench_cuda import torch_time, ts_time  # noqa: E402  (CUDA events, medians)
from resnet import resnet18  # noqa: E402

# (N, C, H, stride) of depthwise 3x3 convolutions in MobileNetV2 at 224x224.
DEPTHWISE = [(64, 144, 56, 1), (64, 192, 28, 2), (64, 576, 14, 1)]


@contextlib.contextmanager
def tessera_cudnn(enabled: bool) -> Iterator[None]:
    old = ts.backends.cudnn.enabled
    ts.backends.cudnn.enabled = enabled
    try:
        yield
    finally:
        ts.backends.cudnn.enabled = old


def peak_mb(run: Callable[[], object], sync: Callable[[], None], reset: Callable[[], None],
            peak: Callable[[], int]) -> float:
    sync()
    reset()
    for _ in range(2):
        run()
    sync()
    return peak() / 2**20


def train_step(batch: int, bf16: bool, channels_last: bool, reps: int,
               cudnn: bool) -> Dict[str, Any]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    torch.manual_seed(0)
    tm = resnet18(torch.nn).cuda()
    sm = resnet18(ts.nn)
    sm.load_state_dict({k: ts.tensor(v.detach().cpu().numpy()) for k, v in tm.state_dict().items()})
    sm.to("cuda")
    tx, ty = torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda")
    sx, sy = ts.asarray(x, device="cuda"), ts.asarray(y, device="cuda")
    if channels_last:
        tm = tm.to(memory_format=torch.channels_last)
        sm = sm.to(memory_format=ts.channels_last)
        tx = tx.to(memory_format=torch.channels_last)
        sx = sx.to(memory_format=ts.channels_last)
    topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
    sopt = ts.optim.SGD(sm.parameters(), lr=0.05, momentum=0.9)

    def t_step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = torch.nn.functional.cross_entropy(tm(tx), ty)
        topt.zero_grad(set_to_none=True)
        loss.backward()
        topt.step()

    def s_step() -> None:
        with ts.autocast("cuda", dtype=ts.bfloat16, enabled=bf16):
            loss = ts.nn.functional.cross_entropy(sm(sx), sy)
        sopt.zero_grad(set_to_none=True)
        loss.backward()
        sopt.step()

    with tessera_cudnn(cudnn):
        s_ms = ts_time(s_step, reps)
        path = ts.backends.cudnn.last_conv_path()
        s_mb = peak_mb(s_step, ts.cuda.synchronize, ts.cuda.reset_peak_memory_stats,
                       ts.cuda.max_memory_allocated)
    t_ms = torch_time(t_step, reps)
    t_mb = peak_mb(t_step, torch.cuda.synchronize, torch.cuda.reset_peak_memory_stats,
                   torch.cuda.max_memory_allocated)
    return {"case": f"resnet18 step b{batch} {'bf16 autocast' if bf16 else 'fp32'} "
                    f"{'channels_last' if channels_last else 'channels_first'}",
            "ts_ms": s_ms, "torch_ms": t_ms, "ts_peak_mb": s_mb, "torch_peak_mb": t_mb,
            "ts_path": path}


def conv_pair(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int,
              dtype: str) -> Tuple[Callable[[], None], Callable[[], None]]:
    tdt = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    sdt = {"fp32": ts.float32, "bf16": ts.bfloat16}[dtype]
    tx = torch.tensor(x, device="cuda", dtype=tdt, requires_grad=True)
    tw = torch.tensor(w, device="cuda", dtype=tdt, requires_grad=True)
    sx = ts.asarray(x, device="cuda").to(sdt).detach().requires_grad_(True)
    sw = ts.asarray(w, device="cuda").to(sdt).detach().requires_grad_(True)
    ty = torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad, groups=groups)
    g = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    tg = torch.tensor(g, device="cuda", dtype=tdt)
    sg = ts.asarray(g, device="cuda").to(sdt)

    def t() -> None:
        torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad, groups=groups).backward(tg)

    def s() -> None:
        ts.nn.functional.conv2d(sx, sw, stride=stride, padding=pad, groups=groups).backward(sg)
    return s, t


def time_pair(case: str, fns: Tuple[Callable[[], None], Callable[[], None]], reps: int,
              cudnn: bool) -> Dict[str, Any]:
    sfn, tfn = fns
    with tessera_cudnn(cudnn):
        s_ms = ts_time(sfn, reps)
        path = ts.backends.cudnn.last_conv_path()
    return {"case": case, "ts_ms": s_ms, "torch_ms": torch_time(tfn, reps), "ts_path": path}


def conv_rows(reps: int, batch: int, dtypes: List[str], cudnn: bool,
              quick: bool) -> List[Dict[str, Any]]:
    rows = []
    rng = np.random.default_rng(0)
    shapes = RESNET18_CONVS[:3] if quick else RESNET18_CONVS
    for dtype in dtypes:
        for cin, cout, h, k, s in shapes:
            x = rng.standard_normal((batch, cin, h, h)).astype(np.float32)
            w = (rng.standard_normal((cout, cin, k, k)) * 0.05).astype(np.float32)
            rows.append(time_pair(f"conv {cin}->{cout} {h}x{h} k{k} s{s} b{batch} {dtype}",
                                  conv_pair(x, w, s, k // 2, 1, dtype), reps, cudnn))
        for n, c, h, s in (DEPTHWISE[:1] if quick else DEPTHWISE):
            x = rng.standard_normal((n, c, h, h)).astype(np.float32)
            w = (rng.standard_normal((c, 1, 3, 3)) * 0.3).astype(np.float32)
            rows.append(time_pair(f"depthwise3x3 c{c} {h}x{h} s{s} b{n} {dtype}",
                                  conv_pair(x, w, s, 1, c, dtype), reps, cudnn))
    return rows


def markdown(rows: List[Dict[str, Any]]) -> str:
    out = ["| case | tessera ms | torch ms | torch/tessera | tessera peak MB | torch peak MB "
           "| tessera path |", "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        speed = r["torch_ms"] / r["ts_ms"] if r["ts_ms"] else float("nan")
        path = r.get("ts_path", "") or r.get("error", "")
        out.append(f"| {r['case']} | {r['ts_ms']:.3f} | {r['torch_ms']:.3f} | {speed:.2f}x "
                   f"| {r.get('ts_peak_mb', float('nan')):.0f} "
                   f"| {r.get('torch_peak_mb', float('nan')):.0f} | {path} |")
    return "\n".join(out)


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--markdown", help="write the table here too")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="a few cases only")
    ap.add_argument("--no-cudnn", action="store_true", help="tessera without cuDNN")
    ap.add_argument("--both", action="store_true", help="fallback rows too")
    ap.add_argument("--cudnn-benchmark", action="store_true",
                    help="cudnn.benchmark = True in both libraries")
    a = ap.parse_args(argv)
    assert ts.cuda.is_available() and torch.cuda.is_available(), "needs a CUDA GPU"
    if a.cudnn_benchmark:
        torch.backends.cudnn.benchmark = True
        ts.backends.cudnn.benchmark = True
    cudnn = not a.no_cudnn
    info = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "torch_cudnn": torch.backends.cudnn.version(),
            "ts_cudnn": ts.backends.cudnn.version(), "ts_cudnn_error": ts.backends.cudnn.load_error(),
            "cudnn_benchmark": a.cudnn_benchmark}
    print(json.dumps(info))
    rows: List[Dict[str, Any]] = []

    def save() -> None:  # after every row: a failure later keeps what was measured
        table = markdown(rows)
        if a.markdown:
            with open(a.markdown, "w") as f:
                f.write(table + "\n")
        if a.out:
            with open(a.out, "w") as f:
                json.dump({"info": info, "rows": rows}, f, indent=1)

    def add(case: str, run: Callable[[], List[Dict[str, Any]]]) -> None:
        try:
            new = run()
        except Exception as e:  # noqa: BLE001  (reported in the row, the others still run)
            new = [{"case": case, "ts_ms": float("nan"), "torch_ms": float("nan"),
                    "error": f"{type(e).__name__}: {e}"[:400]}]
            print(f"{case}: {new[0]['error']}", flush=True)
        rows.extend(new)
        for r in new:
            print(markdown([r]).splitlines()[-1], flush=True)
        save()

    configs = [(False, False), (True, False), (False, True), (True, True)]
    for bf16, cl in configs[:2] if a.quick else configs:
        add(f"step bf16={bf16} channels_last={cl}",
            lambda bf16=bf16, cl=cl: [train_step(a.batch, bf16, cl, a.reps, cudnn)])
    if a.both and cudnn:
        def fallback_step() -> List[Dict[str, Any]]:
            r = train_step(a.batch, False, False, a.reps, False)
            r["case"] += " (tessera fallback)"
            return [r]
        add("step fallback", fallback_step)
    for dtype in ("fp32", "bf16"):
        add(f"conv shapes {dtype}",
            lambda dtype=dtype: conv_rows(a.reps, a.batch, [dtype], cudnn, a.quick))
    if a.both and cudnn:
        def fallback_convs() -> List[Dict[str, Any]]:
            out = conv_rows(a.reps, a.batch, ["fp32"], False, a.quick)
            for r in out:
                r["case"] += " (fallback)"
            return out
        add("conv shapes fallback", fallback_convs)
    print(markdown(rows))

if __name__ == "__main__":
    main()
