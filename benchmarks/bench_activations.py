"""Pointwise activation benchmarks (nn.functional), tessera vs PyTorch CPU: forward, and
forward + backward of `f(x).sum()`, on a (256, 1024) float32 tensor (a hidden layer of a
batch of 256). Ratios > 1 mean tessera is faster.

    OMP_NUM_THREADS=1 PYTHONPATH=python python benchmarks/bench_activations.py --threads 1 \\
        [--quick] [--markdown FILE]
"""
from __future__ import annotations

from typing import Callable, Dict, List

import numpy as np
import torch

import tessera as ts
from common import bench_main

NAMES = ["sigmoid", "silu", "mish", "hardswish", "hardsigmoid", "elu", "selu", "celu",
         "leaky_relu", "hardtanh", "relu6", "softplus", "gelu", "relu", "tanh"]


def _fns(name: str, a: np.ndarray, backward: bool) -> Dict[str, Callable]:
    f = getattr(ts.nn.functional, name)
    g = getattr(torch.nn.functional, name)
    if backward:
        x, q = ts.asarray(a).requires_grad_(True), torch.tensor(a, requires_grad=True)
        return {"ts": lambda: f(x).sum().backward(), "torch": lambda: g(q).sum().backward()}
    x, q = ts.asarray(a), torch.tensor(a)
    return {"ts": lambda: f(x), "torch": lambda: g(q)}


def cases(quick: bool) -> List[tuple]:
    a = np.random.default_rng(0).standard_normal((256, 1024)).astype(np.float32)
    names = NAMES[:4] if quick else NAMES
    out = []
    for name in names:
        out.append((f"{name} fwd", _fns(name, a, False)))
        out.append((f"{name} fwd+bwd", _fns(name, a, True)))
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main(__doc__, cases))
