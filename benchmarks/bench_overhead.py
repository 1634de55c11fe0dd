"""Per-call overhead of the public Python forms against the bare C++ entry point they reach
and against PyTorch (issue 17): CPU, one thread, tiny tensors, samples interleaved
(public form, bare `_C`, PyTorch, public form, ...) so a noisy neighbour shifts all alike.

Each call is timed without autograd and with it (inputs that require grad, so the op
records a node). The nn ops (linear, layer_norm, softmax, gelu, cross_entropy,
scaled_dot_product_attention) are C++ ops that record their own node: the `_C` column is that
op (csrc/ops/nn/); the row "sdpa vs its kernels" compares the attention op with the bare
matmul, fused softmax, matmul it runs (no autograd there).
Targets (issue 17): public form <= 1.3x the bare `_C` call and below PyTorch.

    python benchmarks/bench_overhead.py [--quick] [--markdown FILE]
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import Callable, Dict, List, Optional

import numpy as np
import torch
import torch.nn.functional as TF

import tessera as ts
import tessera.nn.functional as F
from tessera import _C
from common import calls_per_sample, emit, fmt_time, machine, sample

Case = Dict[str, Optional[Callable[[], object]]]


def _pair(shape, grad: bool, seed: int = 0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ts.asarray(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def cases(grad: bool) -> List[tuple]:
    x, xt = _pair((4, 8), grad)
    y, yt = _pair((4, 8), grad, 1)
    w, wt = _pair((16, 8), grad, 2)
    b, bt = _pair((16,), grad, 3)
    g, gt = _pair((8,), grad, 4)
    beta, betat = _pair((8,), grad, 5)
    q, qt = _pair((2, 2, 8, 8), grad, 6)
    k, kt = _pair((2, 2, 8, 8), grad, 7)
    v, vt = _pair((2, 2, 8, 8), grad, 8)
    tgt = ts.asarray(np.array([1, 0, 7, 3], dtype=np.int64))
    tgtt = torch.tensor([1, 0, 7, 3])
    # x += y needs a non-leaf target when autograd records
    acc, acct = (x * 1, xt * 1) if grad else (ts.asarray(np.zeros((4, 8), np.float32)),
                                              torch.zeros(4, 8))
    f32 = ts.float32
    scale = 1.0 / math.sqrt(8)
    out = [
        ("ts.add(x, y)", {"ts": lambda: ts.add(x, y), "C": lambda: _C.add(x, y),
                          "torch": lambda: torch.add(xt, yt)}),
        ("x.add(y)", {"ts": lambda: x.add(y), "C": lambda: _C.add(x, y),
                      "torch": lambda: xt.add(yt)}),
        ("x + y", {"ts": lambda: x + y, "C": lambda: _C.add(x, y), "torch": lambda: xt + yt}),
        ("ts.sum(x, axis=1)", {"ts": lambda: ts.sum(x, axis=1), "C": lambda: _C._sum(x, (1,), False, None),
                               "torch": lambda: torch.sum(xt, dim=1)}),
        ("ts.sum(x, 1) (torch form)", {"ts": lambda: ts.sum(x, 1),
                                       "C": lambda: _C._sum(x, (1,), False, None),
                                       "torch": lambda: torch.sum(xt, 1)}),
        ("x.sum(1)", {"ts": lambda: x.sum(1), "C": lambda: _C._sum(x, (1,), False, None),
                      "torch": lambda: xt.sum(1)}),
        ("x.mean(1)", {"ts": lambda: x.mean(1), "C": lambda: _C._mean(x, (1,), False),
                       "torch": lambda: xt.mean(1)}),
        ("ts.var(x, axis=1)", {"ts": lambda: ts.var(x, axis=1),
                               "C": lambda: _C._var(x, (1,), 0.0, False),
                               "torch": lambda: torch.var(xt, dim=1, correction=0)}),
        ("ts.max(x, axis=1)", {"ts": lambda: ts.max(x, axis=1), "C": lambda: _C._max(x, (1,), False),
                               "torch": lambda: torch.amax(xt, dim=1)}),
        ("x.reshape(8, 4)", {"ts": lambda: x.reshape(8, 4), "C": lambda: _C._reshape(x, (8, 4), -1),
                             "torch": lambda: xt.reshape(8, 4)}),
        ("ts.stack([x, y])", {"ts": lambda: ts.stack([x, y]), "C": lambda: _C._stack([x, y], 0),
                              "torch": lambda: torch.stack([xt, yt])}),
        ("x.transpose(0, 1)", {"ts": lambda: x.transpose(0, 1),
                               "C": lambda: _C._permute_dims(x, (1, 0)),
                               "torch": lambda: xt.transpose(0, 1)}),
        ("ts.cat([x, y], 1)", {"ts": lambda: ts.cat([x, y], 1), "C": lambda: _C.concat([x, y], 1),
                               "torch": lambda: torch.cat([xt, yt], 1)}),
        ("F.linear(x, w, b)", {"ts": lambda: F.linear(x, w, b), "C": lambda: _C.linear(x, w, b),
                               "torch": lambda: TF.linear(xt, wt, bt)}),
        ("F.layer_norm(x, (8,), g, b)", {"ts": lambda: F.layer_norm(x, (8,), g, beta),
                                         "C": lambda: _C.layer_norm(x, (8,), g, beta),
                                         "torch": lambda: TF.layer_norm(xt, (8,), gt, betat)}),
        ("F.softmax(x, dim=-1)", {"ts": lambda: F.softmax(x, dim=-1), "C": lambda: _C.softmax(x, -1),
                                  "torch": lambda: TF.softmax(xt, dim=-1)}),
        ("F.gelu(x)", {"ts": lambda: F.gelu(x), "C": lambda: _C.gelu(x), "torch": lambda: TF.gelu(xt)}),
        ("F.cross_entropy(x, t)", {"ts": lambda: F.cross_entropy(x, tgt),
                                   "C": lambda: _C.cross_entropy(x, tgt),
                                   "torch": lambda: TF.cross_entropy(xt, tgtt)}),
        ("F.scaled_dot_product_attention", {
            "ts": lambda: F.scaled_dot_product_attention(q, k, v),
            "C": lambda: _C.scaled_dot_product_attention(q, k, v),
            "torch": lambda: TF.scaled_dot_product_attention(qt, kt, vt)}),
        ("sdpa vs its kernels", {
            "ts": lambda: F.scaled_dot_product_attention(q, k, v),
            "C": lambda: _C.matmul(_C._attention_softmax(_C.matmul(q, _C.matrix_transpose(k)),
                                                         scale, False), v),
            "torch": lambda: TF.scaled_dot_product_attention(qt, kt, vt)}),
    ]
    out += inplace_cases(grad)
    if not grad:  # creation functions and in-place ops on leaves have no autograd form
        out[3:3] = [("x += y", {"ts": lambda: acc.__iadd__(y), "C": lambda: _C._copy_(acc, _C.add(acc, y)),
                                "torch": lambda: acct.__iadd__(yt)})]
        out += [("ts.zeros((4, 8))", {"ts": lambda: ts.zeros((4, 8)), "C": lambda: _C._full((4, 8), 0, f32, None),
                                      "torch": lambda: torch.zeros((4, 8))}),
                ("ts.zeros(4, 8)", {"ts": lambda: ts.zeros(4, 8), "C": lambda: _C._full((4, 8), 0, f32, None),
                                    "torch": lambda: torch.zeros(4, 8)})]
    else:
        out[3:3] = [("x += y (non-leaf)", {"ts": lambda: acc.__iadd__(y),
                                           "C": lambda: _C._copy_(acc, _C.add(acc, y)),
                                           "torch": lambda: acct.__iadd__(yt)})]
    return out


def inplace_cases(grad: bool) -> List[tuple]:
    """The in-place methods written through their op (8 x 8): the `_C` column is the
    out-of-place op. With autograd, self is a non-leaf and the other operands require grad."""
    s, st = _pair((8, 8), False, 10)
    a, at = _pair((8, 8), grad, 11)
    c, ct = _pair((8, 8), grad, 12)
    if grad:
        s, st = s.requires_grad_(True) * 1, st.requires_grad_(True) * 1
    d, dt = ts.abs(c) + 0.5, ct.abs() + 0.5
    return [
        ("x.clamp_(0, 1)", {"ts": lambda: s.clamp_(0, 1), "C": lambda: _C.clamp(s, 0, 1),
                            "torch": lambda: st.clamp_(0, 1)}),
        ("x.lerp_(y, 0.5)", {"ts": lambda: s.lerp_(a, 0.5), "C": lambda: _C.lerp(s, a, 0.5),
                             "torch": lambda: st.lerp_(at, 0.5)}),
        ("x.addcmul_(y, z)", {"ts": lambda: s.addcmul_(a, c, value=1e-3),
                              "C": lambda: _C.addcmul(s, a, c, value=1e-3),
                              "torch": lambda: st.addcmul_(at, ct, value=1e-3)}),
        ("x.addcdiv_(y, z)", {"ts": lambda: s.addcdiv_(a, d, value=1e-3),
                              "C": lambda: _C.addcdiv(s, a, d, value=1e-3),
                              "torch": lambda: st.addcdiv_(at, dt, value=1e-3)}),
        ("x.addmm_(y, z)", {"ts": lambda: s.addmm_(a, c, alpha=1e-3),
                            "C": lambda: _C.addmm(s, a, c, alpha=1e-3),
                            "torch": lambda: st.addmm_(at, ct, alpha=1e-3)}),
        ("x.erf_()", {"ts": lambda: s.erf_(), "C": lambda: _C.erf(s), "torch": lambda: st.erf_()}),
    ]


def model_case() -> tuple:
    """LayerNorm + Linear + cross-entropy forward and backward on 4 x 8 -> 16 classes."""
    ts.manual_seed(0)
    torch.manual_seed(0)
    ln, lin = ts.nn.LayerNorm(8), ts.nn.Linear(8, 16)
    lnt, lint = torch.nn.LayerNorm(8), torch.nn.Linear(8, 16)
    x, xt = _pair((4, 8), False)
    tgt = ts.asarray(np.array([1, 0, 7, 3], dtype=np.int64))
    tgtt = torch.tensor([1, 0, 7, 3])

    def step_ts():
        F.cross_entropy(lin(ln(x)), tgt).backward()

    def step_torch():
        TF.cross_entropy(lint(lnt(xt)), tgtt).backward()
    return ("LayerNorm+Linear+CE fwd+bwd (4x8)", {"ts": step_ts, "C": None, "torch": step_torch})


def python_calls(fn: Callable[[], object]) -> int:
    """Python function calls made by one call of fn (sys.setprofile 'call' events)."""
    fn()
    n = 0

    def prof(frame, event, arg):
        nonlocal n
        if event == "call":
            n += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return n - 1  # fn itself


def run(name: str, fns: Case, min_time: float, repeats: int = 9) -> Dict[str, object]:
    calls = {lib: calls_per_sample(fn, min_time, repeats) for lib, fn in fns.items() if fn}
    samples: Dict[str, List[float]] = {lib: [] for lib in calls}
    for _ in range(repeats):
        for lib, n in calls.items():
            samples[lib].append(sample(fns[lib], n))
    row: Dict[str, object] = {"case": name}
    row.update({lib: (statistics.median(s) if s else None) for lib, s in samples.items()})
    row["pycalls"] = python_calls(fns["ts"])
    print(f"{name}: " + ", ".join(f"{k}={fmt_time(row.get(k))}" for k in ("ts", "C", "torch")),
          file=sys.stderr)
    return row


def table(rows: List[Dict[str, object]]) -> str:
    out = ["| call | autograd | tessera | bare `_C` | PyTorch | tessera/`_C` | tessera/PyTorch | Python calls |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        t, c, p = r["ts"], r.get("C"), r["torch"]
        rc = f"{t / c:.2f}×" if c else "n/a"
        rp = f"{t / p:.2f}×" if p else "n/a"
        out.append(f"| {r['case']} | {'yes' if r['grad'] else 'no'} | {fmt_time(t)} | {fmt_time(c)} | "
                   f"{fmt_time(p)} | {rc} | {rp} | {r['pycalls']} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--only", default=None, help="run only the calls whose name contains this")
    args = ap.parse_args()
    ts.set_num_threads(1)
    torch.set_num_threads(1)
    min_time = 0.05 if args.quick else args.min_time
    rows = []
    for grad in (False, True):
        for name, fns in cases(grad):
            if args.only is None or args.only in name:
                rows.append(dict(run(name, fns, min_time), grad=grad))
    if args.only is None:
        rows.append(dict(run(*model_case(), min_time), grad=True))
    md = (f"Machine: {machine()}; 1 thread; tessera {ts.__version__}, PyTorch {torch.__version__}. "
          "Ratios < 1 mean tessera is faster (tessera/PyTorch) or closer to the bare C++ op "
          "(tessera/`_C`).\n\n" + table(rows))
    return emit(md, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
