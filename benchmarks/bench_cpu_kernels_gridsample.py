"""F.grid_sample benchmarks, tessera vs PyTorch CPU: forward, and forward + backward of
`grid_sample(x, grid).sum()` (gradients of the input and the grid), for an (8, 16, 32, 32)
float32 input sampled on an (8, 32, 32, 2) grid (bilinear, zeros and reflection padding),
plus a 5-D trilinear case. Ratios > 1 mean tessera is faster (Note [Native grid sampling]).

    OMP_NUM_THREADS=1 PYTHONPATH=python python benchmarks/bench_cpu_kernels_gridsample.py \\
        --threads 1 [--quick] [--markdown FILE]
"""
from __future__ import annotations

from typing import Callable, Dict, List

import numpy as np
import torch

import tessera as ts
from common import bench_main


def _fns(a: np.ndarray, g: np.ndarray, backward: bool, **kw) -> Dict[str, Callable]:
    f, tf = ts.nn.functional.grid_sample, torch.nn.functional.grid_sample
    if backward:
        x, q = ts.asarray(a).requires_grad_(True), torch.tensor(a, requires_grad=True)
        gs, gq = ts.asarray(g).requires_grad_(True), torch.tensor(g, requires_grad=True)
        return {"ts": lambda: f(x, gs, **kw).sum().backward(),
                "torch": lambda: tf(q, gq, **kw).sum().backward()}
    x, q, gs, gq = ts.asarray(a), torch.tensor(a), ts.asarray(g), torch.tensor(g)
    return {"ts": lambda: f(x, gs, **kw), "torch": lambda: tf(q, gq, **kw)}


def cases(quick: bool) -> List[tuple]:
    r = np.random.default_rng(0)
    a = r.standard_normal((8, 16, 32, 32)).astype(np.float32)
    g = r.uniform(-1.1, 1.1, (8, 32, 32, 2)).astype(np.float32)
    out = []
    settings = [("bilinear", "zeros")] if quick else [
        ("bilinear", "zeros"), ("bilinear", "reflection"), ("nearest", "zeros"),
        ("bicubic", "border")]
    for mode, pad in settings:
        kw = dict(mode=mode, padding_mode=pad, align_corners=False)
        out.append((f"2-D {mode}/{pad} fwd", _fns(a, g, False, **kw)))
        out.append((f"2-D {mode}/{pad} fwd+bwd", _fns(a, g, True, **kw)))
    if not quick:
        a3 = r.standard_normal((2, 8, 16, 16, 16)).astype(np.float32)
        g3 = r.uniform(-1.1, 1.1, (2, 16, 16, 16, 3)).astype(np.float32)
        kw = dict(mode="bilinear", padding_mode="zeros", align_corners=True)
        out.append(("3-D bilinear/zeros fwd", _fns(a3, g3, False, **kw)))
        out.append(("3-D bilinear/zeros fwd+bwd", _fns(a3, g3, True, **kw)))
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main(__doc__, cases))
