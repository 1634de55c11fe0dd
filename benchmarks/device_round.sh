#!/usr/bin/env bash
# One batched H100 round (device tool): build, every CUDA test file, the char-GPT step in both
# precisions and per-kernel GPU tables for tessera and torch; one summary in $OUT/summary.txt.
# Usage: bash benchmarks/device_round.sh [extra pytest -k filter]
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
bash benchmarks/run_cuda_device.sh build > "$OUT/build_round.txt" 2>&1
tail -4 "$OUT/build_round.txt" | tee -a "$S"
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
timeout 300 python3 -X faulthandler -m pytest tests/cuda/test_cuda.py tests/cuda/test_cuda_nn.py tests/cuda/test_cuda_rng_index.py \
  tests/cuda/test_cuda_amp.py -q -p no:cacheprovider -k "${1:-}" > "$OUT/tests.txt" 2>&1
{ tail -3 "$OUT/tests.txt"; grep -E "^(FAILED|ERROR)|Fatal|Error:|assert" "$OUT/tests.txt" | head -40; } | tee -a "$S"
cd benchmarks
for a in "" --amp; do timeout 120 python3 bench_cuda_gpt.py $a 2>&1 | tail -1 | tee -a "$S"; done
if [[ ${KERNELS:-1} == 1 ]]; then
  for a in "" --amp; do for lib in tessera torch; do
    timeout 120 python3 kernels_cuda_gpt.py ${ROWS:-22} $lib $a 2>&1 | grep -vE "^-+$|^\s*$" | cut -c1-90,120-175 >> "$S"
  done; done
fi
