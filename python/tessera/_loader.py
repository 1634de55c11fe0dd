"""Loads the BLAS that _C links against before _C itself (it lives in another wheel)."""
from __future__ import annotations

import ctypes
import os


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
