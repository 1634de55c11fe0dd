"""CPU kernels that trailed PyTorch: exact/tanh GELU (forward, forward + backward), F.pad in
reflect/replicate/circular mode (1-D, 2-D, 3-D; forward, forward + backward) and fractional
max pooling, tessera vs PyTorch in one process. Ratios > 1 mean tessera is faster.

    OMP_NUM_THREADS=1 PYTHONPATH=python python benchmarks/bench_cpu_kernels.py --threads 1 \\
        [--quick] [--markdown FILE]
"""
from __future__ import annotations

from typing import Callable, Dict, List

import numpy as np
import torch

import tessera as ts
from common import bench_main


def _pair(a: np.ndarray, f_ts: Callable, f_torch: Callable, backward: bool) -> Dict[str, Callable]:
    if backward:
        x, q = ts.asarray(a).requires_grad_(True), torch.tensor(a, requires_grad=True)
        return {"ts": lambda: f_ts(x).sum().backward(), "torch": lambda: f_torch(q).sum().backward()}
    x, q = ts.asarray(a), torch.tensor(a)
    return {"ts": lambda: f_ts(x), "torch": lambda: f_torch(q)}


def cases(quick: bool) -> List[tuple]:
    rng = np.random.default_rng(0)
    out = []
    a = rng.standard_normal((256, 1024)).astype(np.float32)
    for appr in ["none", "tanh"]:
        for bw in [False, True]:
            out.append((f"gelu {appr} (256, 1024) {'fwd+bwd' if bw else 'fwd'}",
                        _pair(a, lambda x, appr=appr: ts.nn.functional.gelu(x, approximate=appr),
                              lambda x, appr=appr: torch.nn.functional.gelu(x, approximate=appr), bw)))
    pads = [((8, 64, 1024), (3, 3)), ((8, 64, 64, 64), (2, 2, 2, 2)),
            ((2, 16, 16, 32, 32), (1, 1, 1, 1, 1, 1))]
    modes = ["reflect"] if quick else ["reflect", "replicate", "circular"]
    for shape, pad in pads:
        x = rng.standard_normal(shape).astype(np.float32)
        for mode in modes:
            for bw in [False, True]:
                out.append((f"pad {mode} {shape} {pad} {'fwd+bwd' if bw else 'fwd'}",
                            _pair(x, lambda t, p=pad, m=mode: ts.nn.functional.pad(t, p, mode=m),
                                  lambda t, p=pad, m=mode: torch.nn.functional.pad(t, p, mode=m), bw)))
    if not quick:
        x2 = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
        s2 = torch.rand(8, 16, 2).numpy()
        out.append(("fractional_max_pool2d (8, 16, 64, 64) k3 out 32",
                    _pair(x2, lambda t: ts.nn.functional.fractional_max_pool2d(
                              t, 3, output_size=32, _random_samples=ts.asarray(s2)),
                          lambda t: torch.nn.functional.fractional_max_pool2d(
                              t, 3, output_size=32, _random_samples=torch.tensor(s2)), False)))
        x3 = rng.standard_normal((4, 8, 16, 32, 32)).astype(np.float32)
        s3 = torch.rand(4, 8, 3).numpy()
        out.append(("fractional_max_pool3d (4, 8, 16, 32, 32) k2 out (8, 16, 16)",
                    _pair(x3, lambda t: ts.nn.functional.fractional_max_pool3d(
                              t, 2, output_size=(8, 16, 16), _random_samples=ts.asarray(s3)),
                          lambda t: torch.nn.functional.fractional_max_pool3d(
                              t, 2, output_size=(8, 16, 16), _random_samples=torch.tensor(s3)), False)))
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main(__doc__, cases))
