"""`python -m tessera`: version, build configuration, and a short self-check."""
from __future__ import annotations

import sys
import time

import numpy as np

import tessera as ts


def main() -> int:
    cfg = ts.build_config()
    print(f"tessera {cfg['version']}")
    print(f"  BLAS:            {cfg['blas']} ({ts._C._blas_num_threads()} threads)")
    print(f"  OpenMP:          {'on' if cfg['openmp'] else 'off'}, {cfg['num_threads']} threads")
    print(f"  CUDA backend:    {'on' if cfg['cuda'] else 'off'}")
    print(f"  compiler:        {cfg['compiler']}")
    print("self-check:")
    rng = np.random.default_rng(0)
    a_np = rng.standard_normal((256, 256)).astype(np.float32)
    b_np = rng.standard_normal((256, 256)).astype(np.float32)
    a, b = ts.asarray(a_np), ts.asarray(b_np)
    t0 = time.perf_counter()
    c = (a @ b + 1.0) * 2.0 - a
    dt = time.perf_counter() - t0
    ref = (a_np @ b_np + 1.0) * 2.0 - a_np
    err = float(np.max(np.abs(c.numpy() - ref)))
    ok = err < 1e-3
    print(f"  (a @ b + 1) * 2 - a on 256x256 float32: max |error| vs NumPy = {err:.2e} "
          f"({dt * 1e3:.2f} ms)  {'ok' if ok else 'FAILED'}")
    x = ts.asarray([1, 2, 3])
    print(f"  ts.asarray([1, 2, 3]) * 2 = {x * 2}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
