#!/usr/bin/env bash
# The char-GPT step (benchmarks/bench_cuda_gpt.py) under attention.py settings given as
# "NAME=VALUE;NAME=VALUE" arguments, one line per variant (after a build when BUILD=1), and the
# step's total GPU kernel time for each when KERNELS=1. Summary in $OUT/summary.txt.
# Usage (device tool, .whl carried): bash benchmarks/gpt_variants.sh [--amp] "VARIANT" ...
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
[[ -n ${BUILD:-} ]] && { bash benchmarks/run_cuda_device.sh build > /tmp/build_round.txt 2>&1; tail -3 /tmp/build_round.txt | tee -a "$S"; }
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
amp=""
[[ ${1:-} == --amp ]] && { amp=--amp; shift; }
cd benchmarks
for v in "$@"; do
  timeout 100 python3 -c "
import sys, runpy
import tessera.nn.functional.attention as A
for kv in '''$v'''.split(';'):
    if kv: k, x = kv.split('='); setattr(A, k.strip(), eval(x))
sys.argv = ['bench_cuda_gpt.py'] + ('$amp'.split())
runpy.run_path('bench_cuda_gpt.py', run_name='__main__')" 2>&1 | tail -1 | sed "s/^/[$v] /" | tee -a "$S"
  if [[ -n ${KERNELS:-} ]]; then
    timeout 100 python3 -c "
import sys, runpy
import tessera.nn.functional.attention as A
for kv in '''$v'''.split(';'):
    if kv: k, x = kv.split('='); setattr(A, k.strip(), eval(x))
sys.argv = ['kernels_cuda_gpt.py', '8', 'tessera'] + ('$amp'.split())
runpy.run_path('kernels_cuda_gpt.py', run_name='__main__')" 2>&1 | grep -E "Self CUDA time total" | sed "s/^/[$v] /" | tee -a "$S"
  fi
done
