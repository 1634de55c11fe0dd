"""FFT benchmarks: tessera's own engine vs NumPy's pocketfft and PyTorch (MKL/pocketfft).
Ratios > 1 mean tessera is faster. NumPy's FFT is single-threaded, so --threads 1 (the
default here) is the like-for-like comparison; batched cases show what threads add.

    python benchmarks/bench_fft.py [--threads N] [--quick] [--markdown docs/bench_fft.md]
"""
from __future__ import annotations

import sys
from typing import Callable, Dict, List

import numpy as np
import torch

import tessera as ts
from common import bench_main


def _case(name: str, fn: str, x: np.ndarray, **kw) -> tuple:
    t, tt = ts.asarray(x), torch.from_numpy(x)
    tkw = {("dim" if k == "axis" else k): v for k, v in kw.items()}
    fns: Dict[str, Callable] = {"ts": lambda: getattr(ts.fft, fn)(t, **kw),
                                "np": lambda: getattr(np.fft, fn)(x, **kw),
                                "torch": lambda: getattr(torch.fft, fn)(tt, **tkw)}
    return name, fns


def cases(quick: bool) -> List[tuple]:
    rng = np.random.default_rng(0)

    def cplx(*shape, dtype=np.complex64):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)

    out = [
        _case("fft 2^20 complex64", "fft", cplx(2**20)),
        _case("fft 2^20 complex128", "fft", cplx(2**20, dtype=np.complex128)),
        _case("fft 100003 (prime) complex64", "fft", cplx(100003)),
        _case("fft 3^10 complex64", "fft", cplx(3**10)),
        _case("fft 1000 complex64 x 1000 rows", "fft", cplx(1000, 1000)),
        _case("rfft 2^20 float32", "rfft", rng.standard_normal(2**20).astype(np.float32)),
        _case("irfft 2^19+1 -> 2^20 complex64", "irfft", cplx(2**19 + 1)),
        _case("fft 1024 complex64, axis 0 of 1024x256", "fft", cplx(1024, 256), axis=0),
        _case("fftn 512x512 complex64", "fftn", cplx(512, 512)),
        _case("rfftn 256x256x64 float32", "rfftn",
              rng.standard_normal((256, 256, 64)).astype(np.float32)),
        _case("fft 64 complex64 (overhead)", "fft", cplx(64)),
    ]
    return out[:4] if quick else out


if __name__ == "__main__":
    sys.exit(bench_main(__doc__, cases))
