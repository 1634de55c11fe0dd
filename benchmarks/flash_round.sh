#!/usr/bin/env bash
# One H100 round for the fused attention and new CUDA kernels: build, their tests, the CUDA nn/amp
# tests, the attention benchmark and the char-GPT step with the flash kernel on and off.
# Summary in $OUT/summary.txt. Usage (device tool, .whl carried): bash benchmarks/flash_round.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
bash benchmarks/run_cuda_device.sh build > "$OUT/build_round.txt" 2>&1
tail -4 "$OUT/build_round.txt" | tee -a "$S"
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
timeout 200 python3 -X faulthandler -m pytest tests/cuda/test_cuda_attention.py tests/nn/test_attention_fused.py \
  tests/cuda/test_cuda_sets_math.py ${EXTRA_TESTS:-} -q -p no:cacheprovider > "$OUT/tests_new.txt" 2>&1
{ tail -2 "$OUT/tests_new.txt"; grep -E "^(FAILED|ERROR)|Fatal" "$OUT/tests_new.txt" | head -30; } | tee -a "$S"
timeout 150 python3 -X faulthandler -m pytest tests/cuda/test_cuda_nn.py tests/cuda/test_cuda_amp.py -q -p no:cacheprovider \
  > "$OUT/tests_nn.txt" 2>&1
{ tail -2 "$OUT/tests_nn.txt"; grep -E "^(FAILED|ERROR)|Fatal" "$OUT/tests_nn.txt" | head -20; } | tee -a "$S"
timeout 100 python3 benchmarks/bench_cuda_attention.py 20 2>&1 | tail -20 | tee -a "$S"
cd benchmarks
for a in "" --amp; do
  timeout 100 python3 bench_cuda_gpt.py $a 2>&1 | tail -1 | sed 's/^/flash on: /' | tee -a "$S"
  timeout 100 python3 -c "
import sys, runpy
import tessera.nn.functional.attention as A
A._C._set_attention_settings(flash_on_cuda=False)
sys.argv = ['bench_cuda_gpt.py'] + sys.argv[1:]
runpy.run_path('bench_cuda_gpt.py', run_name='__main__')" $a 2>&1 | tail -1 | sed 's/^/flash off: /' | tee -a "$S"
done
