"""Indexing, sorting and set benchmarks: sort/argsort of 2^20 float32, unique of 2^20 int32,
fancy indexing and boolean masking on 2^22 elements. Ratios > 1 mean tessera is faster.

    python benchmarks/bench_indexing.py [--threads N] [--markdown FILE]
"""
from __future__ import annotations

import sys
from typing import List

import numpy as np
import torch

import tessera as ts
from common import bench_main


def cases(quick: bool = False) -> List[tuple]:
    rng = np.random.default_rng(0)
    out = []
    f_np = rng.standard_normal(2 ** 20).astype(np.float32)
    f_ts, f_t = ts.asarray(f_np), torch.from_numpy(f_np)
    out.append(("sort 2^20 float32", {"ts": lambda: ts.sort(f_ts), "np": lambda: np.sort(f_np),
                                      "torch": lambda: torch.sort(f_t)[0]}))
    out.append(("argsort 2^20 float32", {"ts": lambda: ts.argsort(f_ts), "np": lambda: np.argsort(f_np),
                                         "torch": lambda: torch.argsort(f_t)}))
    out.append(("argsort 2^20 float32 (stable)", {"ts": lambda: ts.argsort(f_ts),
                                                  "np": lambda: np.argsort(f_np, kind="stable"),
                                                  "torch": lambda: torch.argsort(f_t, stable=True)}))
    r_np = rng.standard_normal((1024, 1024)).astype(np.float32)
    r_ts, r_t = ts.asarray(r_np), torch.from_numpy(r_np)
    out.append(("sort 1024 rows of 1024 float32", {"ts": lambda: ts.sort(r_ts), "np": lambda: np.sort(r_np),
                                                   "torch": lambda: torch.sort(r_t)[0]}))
    out.append(("topk 16 of 2^20 float32", {"ts": lambda: ts.topk(f_ts, 16),
                                            "torch": lambda: torch.topk(f_t, 16)}))
    u_np = rng.integers(0, 100000, 2 ** 20).astype(np.int32)
    u_ts, u_t = ts.asarray(u_np), torch.from_numpy(u_np)
    out.append(("unique_values 2^20 int32", {"ts": lambda: ts.unique_values(u_ts), "np": lambda: np.unique_values(u_np),
                                             "torch": lambda: torch.unique(u_t)}))
    out.append(("unique_all 2^20 int32", {"ts": lambda: ts.unique_all(u_ts), "np": lambda: np.unique_all(u_np),
                                          "torch": lambda: torch.unique(u_t, return_inverse=True, return_counts=True)}))
    g_np = rng.standard_normal(2 ** 22).astype(np.float32)
    g_ts, g_t = ts.asarray(g_np), torch.from_numpy(g_np)
    i_np = rng.integers(0, 2 ** 22, 2 ** 22)
    i_ts, i_t = ts.asarray(i_np), torch.from_numpy(i_np)
    out.append(("x[int64 idx] 2^22 float32", {"ts": lambda: g_ts[i_ts], "np": lambda: g_np[i_np],
                                              "torch": lambda: g_t[i_t]}))
    m_np = g_np > 0
    m_ts, m_t = ts.asarray(m_np), torch.from_numpy(m_np)
    out.append(("x[mask] 2^22 float32", {"ts": lambda: g_ts[m_ts], "np": lambda: g_np[m_np],
                                         "torch": lambda: g_t[m_t]}))

    def put_ts():
        g_ts[m_ts] = 0.0

    def put_np():
        g_np[m_np] = 0.0

    def put_t():
        g_t[m_t] = 0.0

    out.append(("x[mask] = 0 2^22 float32", {"ts": put_ts, "np": put_np, "torch": put_t}))
    s_np = rng.standard_normal((2048, 2048)).astype(np.float32)
    s_ts, s_t = ts.asarray(s_np), torch.from_numpy(s_np)
    rows = rng.integers(0, 2048, 1024)
    rows_ts, rows_t = ts.asarray(rows), torch.from_numpy(rows)
    out.append(("x[rows] 1024 rows of 2048² float32", {"ts": lambda: s_ts[rows_ts], "np": lambda: s_np[rows],
                                                      "torch": lambda: s_t[rows_t]}))
    gi_np = rng.integers(0, 2048, (2048, 2048))
    gi_ts, gi_t = ts.asarray(gi_np), torch.from_numpy(gi_np)
    out.append(("gather dim=1 2048² float32", {"ts": lambda: ts.gather(s_ts, 1, gi_ts),
                                               "np": lambda: np.take_along_axis(s_np, gi_np, 1),
                                               "torch": lambda: torch.gather(s_t, 1, gi_t)}))
    return out


if __name__ == "__main__":
    sys.exit(bench_main(__doc__, cases))
