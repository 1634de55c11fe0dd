#!/usr/bin/env bash
# H100 round for the cuSOLVER/cuFFT kernels: build, their tests, the linalg/fft suites in device
# mode, the CUDA core tests, and an import-order probe (tessera before torch). Summary in
# $OUT/summary.txt. Usage (device tool, .whl carried): bash benchmarks/linalg_round.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
S=$OUT/summary.txt
bash benchmarks/run_cuda_device.sh build > "$OUT/build_round.txt" 2>&1
tail -4 "$OUT/build_round.txt" | tee -a "$S"
export PYTHONPATH=/tmp/site:$PWD/python PYTHONUNBUFFERED=1
probe() {
  echo "probe: $1" | tee -a "$S"
  timeout 60 python3 -X faulthandler -c "$1" > "$OUT/probe.txt" 2>&1; echo "rc $?" | tee -a "$S"
  grep -v "^  File \"<frozen" "$OUT/probe.txt" | tail -${2:-6} | tee -a "$S"
}
probe "import tessera; import torch; print(torch.ones(2, device='cuda') + 1)"
probe "import tessera, torch; l = torch.nn.Linear(4, 4).cuda(); print(l(torch.ones(2, 4, device='cuda')).sum().item())" 12
probe "import tessera, torch, re; l = torch.nn.Linear(4, 4).cuda(); l(torch.ones(2, 4, device='cuda'));
print(sorted(set(re.findall(r'\S*(?:cublas|cudart|cusolver|cufft)\S*', open('/proc/self/maps').read()))))" 3
probe "import torch, tessera, re; l = torch.nn.Linear(4, 4).cuda(); l(torch.ones(2, 4, device='cuda'));
print(sorted(set(re.findall(r'\S*(?:cublas|cudart|cusolver|cufft)\S*', open('/proc/self/maps').read()))))" 3
timeout 240 python3 -X faulthandler -m pytest tests/cuda/test_cuda_linalg_fft.py tests/cuda/test_cuda_attention.py \
  tests/cuda/test_cuda_sets_math.py -q -p no:cacheprovider > "$OUT/tests_new.txt" 2>&1
{ tail -2 "$OUT/tests_new.txt"; grep -E "^(FAILED|ERROR)|Fatal" "$OUT/tests_new.txt" | head -30; } | tee -a "$S"
timeout 150 python3 -X faulthandler -m pytest tests/ops/linalg/test_linalg.py tests/ops/fft/test_fft.py tests/autograd/test_grad_linalg.py \
  -q -p no:cacheprovider --device cuda -x --deselect tests/ops/linalg/test_linalg.py::test_matrix_power_int > "$OUT/tests_dev.txt" 2>&1
{ tail -2 "$OUT/tests_dev.txt"; grep -E "^(FAILED|ERROR)|Fatal" "$OUT/tests_dev.txt" | head -20; } | tee -a "$S"
timeout 120 python3 -X faulthandler -m pytest tests/cuda/test_cuda.py -q -p no:cacheprovider > "$OUT/tests_cuda.txt" 2>&1
{ tail -2 "$OUT/tests_cuda.txt"; grep -E "^(FAILED|ERROR)|Fatal" "$OUT/tests_cuda.txt" | head -20; } | tee -a "$S"
cd benchmarks && timeout 90 python3 bench_cuda_gpt.py 2>&1 | tail -1 | tee -a "$S"
