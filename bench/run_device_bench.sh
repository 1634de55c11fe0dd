#!/bin/sh
# Builds bench_reduce.cpp with the reduction sources only and runs it, then NumPy/torch.
set -e
SRC="csrc/core/*.cpp csrc/iter/*.cpp csrc/ops/reduce.cpp csrc/ops/cumulative.cpp csrc/ops/copy.cpp \
 csrc/ops/views.cpp csrc/ops/arithmetic.cpp csrc/ops/elementwise.cpp csrc/cpu/parallel.cpp \
 csrc/cpu/copy_kernels.cpp csrc/cpu/arithmetic_kernels.cpp csrc/cpu/reduce_kernels.cpp \
 csrc/cpu/minmax_kernels.cpp csrc/cpu/logical_reduce_kernels.cpp csrc/cpu/cumulative_kernels.cpp"
mkdir -p /tmp/bo
for f in $SRC bench/bench_reduce.cpp; do
  g++ -std=c++17 -O3 -fopenmp -fno-math-errno -Icsrc -c $f -o /tmp/bo/$(echo $f | tr / _).o &
done
wait
g++ -fopenmp /tmp/bo/*.o -o /tmp/bench_reduce
/tmp/bench_reduce
python3 - <<'PY'
import time, numpy as np, torch
def best(f):
    f(); t = []
    for _ in range(20):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    return min(t) * 1e6
rng = np.random.default_rng(0)
for nt in (1, 2, 16):
    torch.set_num_threads(nt)
    print("torch threads", nt, "(numpy is single-threaded)")
    for k in (20, 24):
        a = rng.standard_normal(1 << k).astype(np.float32); t = torch.from_numpy(a)
        print(f"  sum 2^{k}: numpy {best(lambda: np.sum(a)):9.1f}  torch {best(lambda: torch.sum(t)):9.1f}")
        print(f"  max 2^{k}: numpy {best(lambda: np.max(a)):9.1f}  torch {best(lambda: torch.max(t)):9.1f}")
        print(f"  argmax 2^{k}: numpy {best(lambda: np.argmax(a)):9.1f}  torch {best(lambda: torch.argmax(t)):9.1f}")
    m = rng.standard_normal((2048, 2048)).astype(np.float32); tm = torch.from_numpy(m)
    print(f"  colsum: numpy {best(lambda: m.sum(0)):9.1f}  torch {best(lambda: tm.sum(0)):9.1f}")
    print(f"  rowsum: numpy {best(lambda: m.sum(1)):9.1f}  torch {best(lambda: tm.sum(1)):9.1f}")
    print(f"  colmax: numpy {best(lambda: m.max(0)):9.1f}  torch {best(lambda: tm.amax(0)):9.1f}")
    print(f"  var: numpy {best(lambda: m.var()):9.1f}  torch {best(lambda: tm.var(correction=0)):9.1f}")
    print(f"  cumsum ax1: numpy {best(lambda: np.cumsum(m, 1)):9.1f}  torch {best(lambda: torch.cumsum(tm, 1)):9.1f}")
PY
