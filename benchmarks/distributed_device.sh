#!/usr/bin/env bash
# On a 2-GPU machine (device tool, .whl carried): builds tessera with CUDA, runs the NCCL
# tests (tests/distributed/*_worker.py with DEVICE=cuda) and benchmarks/bench_distributed.py
# for tessera and PyTorch. Logs and results go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
N=${N:-2}
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$OUT/gpu.txt"
t0=$(date +%s)
cmake -S . -B build/cuda -G Ninja -DTESSERA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
ninja -C build/cuda -j32 > "$OUT/build.log" 2>&1 || { grep -E "error" -A3 "$OUT/build.log" | head -40; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
python3 -c "import tessera as ts, tessera.distributed as d; print(ts.cuda.device_count(), d.is_nccl_available())" 2>&1 | tee -a "$OUT/summary.txt"
L="python3 -m tessera.distributed.run --no-mpiexec --nproc-per-node $N"
for w in collectives ddp; do
  DEVICE=cuda timeout 150 $L tests/distributed/${w}_worker.py > "$OUT/nccl_$w.log" 2>&1
  echo "nccl $w rc=$? $(grep -c ' ok' "$OUT/nccl_$w.log") ok lines" | tee -a "$OUT/summary.txt"
  grep -E "Error|error|assert" "$OUT/nccl_$w.log" | head -8
done
B="benchmarks/bench_distributed.py --out $OUT/bench.jsonl"
for lib in torch tessera; do timeout 90 $L $B --lib $lib --what allreduce 2>&1 | tail -3; done
for lib in torch tessera; do
  for n in 1 $N; do
    timeout 120 python3 -m tessera.distributed.run --no-mpiexec --nproc-per-node $n $B --lib $lib --what gpt --reps 8 2>&1 | tail -3
  done
done
cat "$OUT/bench.jsonl"
