"""Foundation benchmarks: per-op overhead, bandwidth-bound elementwise ops and reductions,
a transposed operand, column sums, matmul. Ratios > 1 mean tessera is faster.

    python benchmarks/bench_core.py [--threads N] [--quick] [--markdown docs/benchmarks.md]
"""
from __future__ import annotations

import sys
from typing import List

import numpy as np
import torch

import tessera as ts
from common import bench_main


# Each case builds its closures in its own function scope: a lambda made in a loop would
# see the loop's last arrays (late binding) and time the wrong size.
def bandwidth_cases(p: int, rng: np.random.Generator) -> List[tuple]:
    x_np = rng.standard_normal(2 ** p).astype(np.float32)
    y_np = rng.standard_normal(2 ** p).astype(np.float32)
    x_ts, y_ts = ts.asarray(x_np), ts.asarray(y_np)
    x_t, y_t = torch.from_numpy(x_np), torch.from_numpy(y_np)
    return [
        (f"add 2^{p} float32", {"ts": lambda: x_ts + y_ts, "np": lambda: x_np + y_np, "torch": lambda: x_t + y_t}),
        (f"mul 2^{p} float32", {"ts": lambda: x_ts * y_ts, "np": lambda: x_np * y_np, "torch": lambda: x_t * y_t}),
        (f"exp 2^{p} float32", {"ts": lambda: ts.exp(x_ts), "np": lambda: np.exp(x_np), "torch": lambda: torch.exp(x_t)}),
        (f"tanh 2^{p} float32", {"ts": lambda: ts.tanh(x_ts), "np": lambda: np.tanh(x_np), "torch": lambda: torch.tanh(x_t)}),
        (f"sum 2^{p} float32", {"ts": lambda: ts.sum(x_ts), "np": lambda: np.sum(x_np), "torch": lambda: torch.sum(x_t)}),
        (f"max 2^{p} float32", {"ts": lambda: ts.max(x_ts), "np": lambda: np.max(x_np), "torch": lambda: torch.max(x_t)}),
    ]


def transpose_cases(n: int, rng: np.random.Generator, copy: bool = False) -> List[tuple]:
    """a + a (contiguous) beside a + a.T (Note [Tiled iteration]) at one size; at 2048² also
    a + b (two contiguous operands) beside a + b.T (a transposed operand of its own), and
    optionally the transposing copy a.T.contiguous()."""
    m_np = rng.standard_normal((n, n)).astype(np.float32)
    m_ts, m_t = ts.asarray(m_np), torch.from_numpy(m_np)
    out = [(f"add {n}² contiguous", {"ts": lambda: m_ts + m_ts, "np": lambda: m_np + m_np,
                                      "torch": lambda: m_t + m_t}),
           (f"add {n}² + its transpose", {"ts": lambda: m_ts + m_ts.T, "np": lambda: m_np + m_np.T,
                                           "torch": lambda: m_t + m_t.T})]
    if copy:
        b_np = rng.standard_normal((n, n)).astype(np.float32)
        b_ts, b_t = ts.asarray(b_np), torch.from_numpy(b_np)
        out += [(f"add {n}² a + b", {"ts": lambda: m_ts + b_ts, "np": lambda: m_np + b_np,
                                      "torch": lambda: m_t + b_t}),
                (f"add {n}² a + b.T", {"ts": lambda: m_ts + b_ts.T, "np": lambda: m_np + b_np.T,
                                        "torch": lambda: m_t + b_t.T})]
    if copy:
        out.append((f"copy of {n}² transpose", {"ts": lambda: m_ts.T.contiguous(),
                                                 "np": lambda: np.ascontiguousarray(m_np.T),
                                                 "torch": lambda: m_t.T.contiguous()}))
    return out


def batched_transpose_case(b: int, n: int, rng: np.random.Generator) -> tuple:
    x_np = rng.standard_normal((b, n, n)).astype(np.float32)
    x_ts, x_t = ts.asarray(x_np), torch.from_numpy(x_np)
    return (f"add {b}×{n}² + its batched transpose",
            {"ts": lambda: x_ts + x_ts.mT, "np": lambda: x_np + np.swapaxes(x_np, -1, -2),
             "torch": lambda: x_t + x_t.mT})


def matmul_case(n: int, rng: np.random.Generator) -> tuple:
    p_np = rng.standard_normal((n, n)).astype(np.float32)
    q_np = rng.standard_normal((n, n)).astype(np.float32)
    p_ts, q_ts = ts.asarray(p_np), ts.asarray(q_np)
    p_t, q_t = torch.from_numpy(p_np), torch.from_numpy(q_np)
    return (f"matmul {n}² float32", {"ts": lambda: p_ts @ q_ts, "np": lambda: p_np @ q_np,
                                     "torch": lambda: p_t @ q_t})


def special_case_group(n: int, size: str, rng: np.random.Generator) -> List[tuple]:
    pos_np = rng.uniform(0.1, 20.0, n).astype(np.float32)
    unit_np = rng.uniform(-0.99, 0.99, n).astype(np.float32)
    pos_ts, unit_ts = ts.asarray(pos_np), ts.asarray(unit_np)
    pos_t, unit_t = torch.from_numpy(pos_np), torch.from_numpy(unit_np)
    return [
        (f"lgamma {size} float32", {"ts": lambda: ts.lgamma(pos_ts),
                                    "torch": lambda: torch.lgamma(pos_t)}),
        (f"digamma {size} float32", {"ts": lambda: ts.digamma(pos_ts),
                                     "torch": lambda: torch.digamma(pos_t)}),
        (f"polygamma(2) {size} float32", {"ts": lambda: ts.polygamma(2, pos_ts),
                                          "torch": lambda: torch.polygamma(2, pos_t)}),
        (f"erfinv {size} float32", {"ts": lambda: ts.erfinv(unit_ts),
                                    "torch": lambda: torch.erfinv(unit_t)}),
        (f"i0 {size} float32", {"ts": lambda: ts.i0(pos_ts), "torch": lambda: torch.i0(pos_t)}),
        (f"xlogy {size} float32", {"ts": lambda: ts.xlogy(unit_ts, pos_ts),
                                   "torch": lambda: torch.xlogy(unit_t, pos_t)}),
        (f"sinc {size} float32", {"ts": lambda: ts.sinc(unit_ts),
                                  "torch": lambda: torch.sinc(unit_t)}),
    ]


def special_cases(p: int, rng: np.random.Generator) -> List[tuple]:
    """torch.special's functions (C++ ops, csrc/ops/special.h): 4 elements (overhead) and 2^p
    float32 elements (the kernels), for x > 0 (lgamma/digamma/i0/xlogy) or in (-1, 1)."""
    return special_case_group(4, "4", rng) + special_case_group(2 ** p, f"2^{p}", rng)


def cases(quick: bool) -> List[tuple]:
    out = []
    # ---- per-op overhead
    a_np = np.ones(4, np.float32)
    a_ts, b_ts = ts.asarray(a_np.copy()), ts.asarray(a_np.copy())
    a_t, b_t = torch.ones(4), torch.ones(4)
    b_np = a_np.copy()
    out.append(("overhead: add, 4 float32", {"ts": lambda: a_ts + b_ts, "np": lambda: a_np + b_np,
                                             "torch": lambda: a_t + b_t}))
    out.append(("overhead: tensor + 1.0, 4 float32", {"ts": lambda: a_ts + 1.0, "np": lambda: a_np + 1.0,
                                                       "torch": lambda: a_t + 1.0}))
    out.append(("overhead: sum, 4 float32", {"ts": lambda: ts.sum(a_ts), "np": lambda: np.sum(a_np),
                                             "torch": lambda: torch.sum(a_t)}))
    # ---- bandwidth-bound ops
    sizes = [20] if quick else [20, 24]
    rng = np.random.default_rng(0)
    for p in sizes:
        out += bandwidth_cases(p, rng)
    out += special_cases(20, rng)
    # ---- layout
    out += transpose_cases(2048, rng, copy=True)
    if not quick:
        for n in (1024, 2049, 4096):
            out += transpose_cases(n, rng)
        out.append(batched_transpose_case(16, 512, rng))
    m_np = rng.standard_normal((2048, 2048)).astype(np.float32)
    m_ts, m_t = ts.asarray(m_np), torch.from_numpy(m_np)
    out.append(("column sums 2048²", {"ts": lambda: ts.sum(m_ts, axis=0), "np": lambda: m_np.sum(axis=0),
                                      "torch": lambda: m_t.sum(dim=0)}))
    # ---- matmul
    for n in (256, 1024):
        out.append(matmul_case(n, rng))
    return out


if __name__ == "__main__":
    sys.exit(bench_main(__doc__, cases))
