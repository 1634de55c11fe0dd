"""Loads the BLAS that _C links against before _C itself (it lives in another wheel)."""
from __future__ import annotations

import ctypes
import os


def tame_openmp_spinning() -> None:
    """Note [OpenMP spin]: after a parallel region libgomp's idle threads spin for ~300k
    iterations by default; on a small machine they starve OpenBLAS's own threads (a 512^2
    solve went from 17 ms to 300 ms). A short spin keeps back-to-back regions fast without
    that. Must run before _C (and so libgomp) loads; users can still set their own value."""
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")


def preload_blas() -> None:
    try:
        import scipy_openblas32 as ob
    except ImportError:  # built against a system BLAS
        return
    libdir = ob.get_lib_dir()
    for name in os.listdir(libdir):
        if name.startswith("libscipy_openblas") and name.endswith(".so"):
            ctypes.CDLL(os.path.join(libdir, name), mode=ctypes.RTLD_GLOBAL)
            return
