#!/usr/bin/env bash
# The gpukern items on the GPU machine (issue 18: channels-last pools on CUDA; issue 19: dropout
# inside flash attention with one Philox call per four scores, the autocast weight-cast cache,
# GPT-2-small rows): runs their CUDA tests and benchmarks, logs to $OUT. From the repo root,
# with build/cuda built (run_cuda_device.sh build, or WHAT=all builds it first):
#   bash benchmarks/gpukern_device.sh [all|build|test|bench|gpt]   (default: test + bench + gpt)
# Files in $OUT (8 at most come back): test_gpukern.log, bench_pool_dropout.md,
# bench_gpt.txt, resnet_step.txt (+ gpu.txt, build.log, cmake.log, build_time.txt when built).
set -uo pipefail
WHAT=${1:-run}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [[ $WHAT == build || $WHAT == all ]]; then
  ARCHS=${ARCHS:-90} bash benchmarks/run_cuda_device.sh build || exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null | tail -2
export PYTHONPATH=/tmp/site:$PWD/python
so=$(ls build/cuda/_C.cpython-*.so 2>/dev/null | head -1)
[[ -n $so ]] && ln -sf "../../$so" python/tessera/
python3 -c "import tessera as ts; print(ts.__version__, ts.cuda.is_available(), ts.cuda.get_device_name())" || exit 1

if [[ $WHAT == test || $WHAT == all || $WHAT == run ]]; then
  # CUDA: channels-last pools (values, indices, strides of outputs and input gradients vs
  # PyTorch), batch norm and the small CNN (layouts through the whole step), attention dropout
  # (CUDA kernel = CPU kernel = mask op, create_graph backward), autocast on CUDA.
  # CPU: the mask's definition (Python Philox), autocast cache counts.
  # (No --timeout: pytest-timeout may be missing there; the shell's timeout bounds each run.)
  { timeout 300 python3 -X faulthandler -m pytest -q -p no:cacheprovider tests/cuda/test_cuda_conv.py \
      -k "pool or strides or batch_norm or small_cnn" 2>&1
    timeout 400 python3 -X faulthandler -m pytest -q -p no:cacheprovider \
      tests/cuda/test_cuda_attention.py tests/nn/test_attention_dropout.py tests/cuda/test_cuda_amp.py \
      tests/amp/test_amp.py tests/optim/test_optim.py tests/nn/test_batch_norm.py 2>&1; } | tee "$OUT/test_gpukern.log" | tail -5
  grep -E "^(FAILED|ERROR)|Fatal|passed|failed" "$OUT/test_gpukern.log" | head -40
fi
if [[ $WHAT == bench || $WHAT == all || $WHAT == run ]]; then
  # Pools in both layouts and attention with/without dropout, tessera vs PyTorch.
  (cd benchmarks && timeout 300 python3 bench_cuda_pool_dropout.py --reps 30 \
    --markdown "$OUT/bench_pool_dropout.md" 2>&1 | tail -40)
  # The ResNet-18 step channels-first/-last, fp32/bf16 (issue 18's 0.77x / 0.97x rows).
  (cd benchmarks && timeout 300 python3 - <<'EOF' 2>&1 | tee "$OUT/resnet_step.txt"
from bench_cuda_cnn import train_step
for bf16 in (False, True):
    for cl in (False, True):
        r = train_step(256, bf16, cl, 10, True)
        print(f"{r['case']}: tessera {r['ts_ms']:.2f} ms, torch {r['torch_ms']:.2f} ms, "
              f"speed {r['torch_ms'] / r['ts_ms']:.2f}x; peak MB tessera {r['ts_peak_mb']:.0f}, "
              f"torch {r['torch_peak_mb']:.0f} ({r['ts_path']})", flush=True)
EOF
  )
fi
if [[ $WHAT == gpt || $WHAT == all || $WHAT == run ]]; then
  # Issue 19's rows: nanoGPT shakespeare-char (dropout 0.2) and GPT-2 small (dropout 0.1, as
  # GPT-2 trained), float32 and bf16 autocast, speed and peak memory against PyTorch eager.
  # GPT_ROWS (';'-separated argument sets) overrides the rows.
  IFS=';' read -ra rows <<< "${GPT_ROWS:-"--config nanogpt-char;--config nanogpt-char --amp;\
--config gpt2-small --dropout 0.1;--config gpt2-small --dropout 0.1 --amp"}"
  (cd benchmarks && for args in "${rows[@]}"; do
    timeout 240 python3 bench_cuda_gpt.py $args 2>&1 | tail -2
  done) | tee "$OUT/bench_gpt.txt"
fi
