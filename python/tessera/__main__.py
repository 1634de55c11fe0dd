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
    print(f"  CUDA backend:    {'on' if cfg['cuda'] else 'off'}{_cuda_devices() if cfg['cuda'] else ''}")
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
    if ts.cuda.is_available():
        g = (ts.asarray(a_np, device="cuda") @ ts.asarray(b_np, device="cuda") + 1.0) * 2.0 \
            - ts.asarray(a_np, device="cuda")
        gerr = float(np.max(np.abs(g.cpu().numpy() - ref)))
        gok = gerr < 1e-3
        ok = ok and gok
        print(f"  the same on {ts.cuda.get_device_name()}: max |error| = {gerr:.2e}  "
              f"{'ok' if gok else 'FAILED'}")
    return 0 if ok else 1


def _cuda_devices() -> str:
    n = ts.cuda.device_count()
    if n == 0:
        return " (no CUDA device found)"
    return ", " + ", ".join(f"cuda:{i} {ts.cuda.get_device_name(i)}" for i in range(n))


if __name__ == "__main__":
    sys.exit(main())
