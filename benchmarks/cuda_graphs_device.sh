#!/usr/bin/env bash
# Issue 19 (memory visibility, CUDA graphs) on the GPU machine: builds the CUDA backend, runs
# tests/cuda/test_cuda_memory.py and tests/cuda/test_cuda_graphs.py, then bench_cuda_gpt.py on the
# nanogpt-char shape, eager and with --cuda-graph, float32 and --amp. Logs and results go to
# $OUT. Run from the repo root: bash benchmarks/cuda_graphs_device.sh [build|test|bench|all]
set -uo pipefail
WHAT=${1:-all}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [[ $WHAT == build || $WHAT == all ]]; then
  ARCHS=90 bash benchmarks/run_cuda_device.sh build 2>&1 | tail -20 | tee "$OUT/build_tail.txt"
fi
ln -sf ../../build/cuda/_C.cpython-312-x86_64-linux-gnu.so python/tessera/
export PYTHONPATH=/tmp/site:$PWD/python
python3 -c "import tessera as ts; print(ts.cuda.is_available(), ts.cuda.get_device_name())" \
  | tee "$OUT/device.txt" || exit 1
if [[ $WHAT == test || $WHAT == all ]]; then
  for t in test_cuda_memory test_cuda_graphs; do
    timeout 600 python3 -X faulthandler -m pytest tests/cuda/$t.py -q -p no:cacheprovider -x -rf \
      --timeout 300 2>&1 | tee "$OUT/$t.log" | tail -15
  done
  python3 - <<'PY' 2>&1 | tee "$OUT/memory_summary.txt"
import tessera as ts
x = [ts.empty(n, device="cuda") for n in (1000, 300000, 5000000)]
print(ts.cuda.memory_summary())
print(len(ts.cuda.memory_snapshot()), "segments")
PY
fi
if [[ $WHAT == bench || $WHAT == all ]]; then
  cd benchmarks
  for amp in "" "--amp"; do
    timeout 300 python3 cuda_memory_gpt.py $amp 2>&1 | tee "$OUT/memory_gpt${amp:+_amp}.txt" | head -8
  done
  for amp in "" "--amp"; do
    for graph in "" "--cuda-graph"; do
      name="gpt_nanogpt_char${amp:+_amp}${graph:+_graph}"
      echo "== bench_cuda_gpt.py --config nanogpt-char $amp $graph" | tee "$OUT/$name.txt"
      timeout 300 python3 bench_cuda_gpt.py --config nanogpt-char $amp $graph 2>&1 \
        | tee -a "$OUT/$name.txt" | tail -12
    done
  done
  cd ..
fi
