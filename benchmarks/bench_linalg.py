"""linalg, einsum and random benchmarks against NumPy and PyTorch: solve / svd / eigh at
512x512 float64, a batch of small inverses, an einsum batched matrix product, and large
random fills. Ratios > 1 mean tessera is faster.

    python benchmarks/bench_linalg.py [--threads N] [--min-time S] [--markdown FILE]

NumPy's bundled OpenBLAS ignores ts/torch.set_num_threads, so --threads also sets
OPENBLAS_NUM_THREADS / OMP_NUM_THREADS before NumPy loads (else on a busy machine its idle
threads spin against the others and its timings swing tenfold).
"""
from __future__ import annotations

import os
import sys

if "--threads" in sys.argv[:-1]:
    _n = sys.argv[sys.argv.index("--threads") + 1]
    os.environ.setdefault("OPENBLAS_NUM_THREADS", _n)
    os.environ.setdefault("OMP_NUM_THREADS", _n)
from typing import List

import numpy as np
import torch

import tessera as ts
from common import bench_main


def cases(quick: bool = False) -> List[tuple]:
    rng = np.random.default_rng(0)
    n = 512
    a_np = rng.standard_normal((n, n)) + n * np.eye(n)
    s_np = a_np @ a_np.T
    b_np = rng.standard_normal((n, 8))
    a_ts, s_ts, b_ts = ts.asarray(a_np), ts.asarray(s_np), ts.asarray(b_np)
    a_t, s_t, b_t = torch.from_numpy(a_np), torch.from_numpy(s_np), torch.from_numpy(b_np)
    small = rng.standard_normal((2000, 4, 4)) + 4 * np.eye(4)
    small_ts, small_t = ts.asarray(small), torch.from_numpy(small)
    x_np = rng.standard_normal((64, 128, 64)).astype(np.float32)
    y_np = rng.standard_normal((64, 64, 128)).astype(np.float32)
    x_ts, y_ts = ts.asarray(x_np), ts.asarray(y_np)
    x_t, y_t = torch.from_numpy(x_np), torch.from_numpy(y_np)
    sub = "bij,bjk->bik"
    np_rng = np.random.default_rng(1)
    big = 1 << 22
    return [
        (f"solve {n}² float64, 8 rhs", {"ts": lambda: ts.linalg.solve(a_ts, b_ts),
                                         "np": lambda: np.linalg.solve(a_np, b_np),
                                         "torch": lambda: torch.linalg.solve(a_t, b_t)}),
        (f"svd {n}² float64", {"ts": lambda: ts.linalg.svd(a_ts), "np": lambda: np.linalg.svd(a_np),
                               "torch": lambda: torch.linalg.svd(a_t)}),
        (f"eigh {n}² float64", {"ts": lambda: ts.linalg.eigh(s_ts), "np": lambda: np.linalg.eigh(s_np),
                                "torch": lambda: torch.linalg.eigh(s_t)}),
        ("inv 2000×4×4 float64", {"ts": lambda: ts.linalg.inv(small_ts),
                                   "np": lambda: np.linalg.inv(small),
                                   "torch": lambda: torch.linalg.inv(small_t)}),
        (f"einsum {sub} 64×128×64 float32", {"ts": lambda: ts.einsum(sub, x_ts, y_ts),
                                               "np": lambda: np.einsum(sub, x_np, y_np, optimize=True),
                                               "torch": lambda: torch.einsum(sub, x_t, y_t)}),
        ("randn 2^22 float32", {"ts": lambda: ts.randn(big),
                                "np": lambda: np_rng.standard_normal(big, dtype=np.float32),
                                "torch": lambda: torch.randn(big)}),
        ("rand 2^22 float32", {"ts": lambda: ts.rand(big),
                               "np": lambda: np_rng.random(big, dtype=np.float32),
                               "torch": lambda: torch.rand(big)}),
    ]


if __name__ == "__main__":
    sys.exit(bench_main(__doc__, cases))
