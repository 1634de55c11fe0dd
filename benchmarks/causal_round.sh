#!/usr/bin/env bash
# H100 round for the causal block attention path: build, its tests, the attention benchmark,
# per-kernel GPU time of sdpa fwd+bwd at the char-GPT shape for row blocks 64/128/off, and the
# char-GPT step with each. Summary in $OUT/summary.txt. Usage (device tool, .whl carried):
# bash benchmarks/causal_round.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
bash benchmarks/run_cuda_device.sh build > /tmp/build_round.txt 2>&1
tail -3 /tmp/build_round.txt | tee -a "$S"
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
for f in tests/nn/test_attention_causal_block.py ${EXTRA_TESTS:-}; do
  timeout 250 python3 -X faulthandler -m pytest $f -q -p no:cacheprovider --tb=line > /tmp/t.txt 2>&1
  echo "== $f: $(tail -1 /tmp/t.txt)" | tee -a "$S"
  grep -E "^(E  |/.*:[0-9]+: )|Fatal|Error" /tmp/t.txt | head -20 | cut -c1-300 | tee -a "$S"
done
cd benchmarks
timeout 150 python3 bench_cuda_attention.py 20 2>&1 | tail -10 | tee -a "$S"
for b in 64 128 1099511627776; do
  echo "--- kernels, block $b" | tee -a "$S"
  CAUSAL_BLOCK=$b timeout 100 python3 kernels_cuda_attention.py 12 2>&1 | sed -n '/tessera float32/,/Self CUDA time total/p' \
    | grep -E "tessera|gemm|softmax|Self CUDA time" | awk '{n=NF; printf "%-60s %s %s\n", substr($0,1,60), $(n-3), $(n-1)}' | tee -a "$S"
  timeout 100 python3 -c "
import sys, runpy
import tessera.nn.functional.attention as A
A._C._set_attention_settings(causal_block=$b)
sys.argv = ['bench_cuda_gpt.py']
runpy.run_path('bench_cuda_gpt.py', run_name='__main__')" 2>&1 | tail -1 | tee -a "$S"
done
