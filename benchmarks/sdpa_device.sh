#!/usr/bin/env bash
# cuDNN's fused attention (Note [cuDNN at run time], Note [cuDNN attention]) on the GPU machine:
# builds tessera with the CUDA backend (run_cuda_device.sh build; .whl/ must hold the
# nvidia-cudnn-frontend wheel for the headers), says whether cuDNN's attention runs and why not,
# runs the attention tests (tests/cuda/test_cuda_attention_cudnn.py, tests/cuda/test_cuda_attention.py)
# and benchmarks/bench_cuda_attention.py against PyTorch. From the repo root:
#   bash benchmarks/sdpa_device.sh [all|build|test|bench|full]   (carry .whl as for run_cuda_device.sh)
# all = build + test + bench (--quick: GPT-2 small and char-GPT-with-dropout, bfloat16);
# full = the whole attention benchmark table. Files in $OUT: gpu.txt cmake.log build.log
# build_time.txt, sdpa.txt (cuDNN and the path taken), test_sdpa.log, bench_sdpa.md.
set -uo pipefail
WHAT=${1:-all}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site:$PWD/python
export PYTHONUNBUFFERED=1
ln -sf ../../build/cuda/_C.cpython-312-x86_64-linux-gnu.so python/tessera/
if [[ $WHAT == build || $WHAT == all ]]; then
  ARCHS=${ARCHS:-90} bash benchmarks/run_cuda_device.sh build || exit 1
else
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
fi
grep -i -E "cudnn|frontend" "$OUT/cmake.log" 2>/dev/null | tee "$OUT/sdpa.txt"
python3 - <<'PY' 2>&1 | tee -a "$OUT/sdpa.txt"
import tessera as ts
from tessera.nn import functional as F
c, b = ts.backends.cudnn, ts.backends.cuda
print("tessera", ts.__version__, "cuda", ts.cuda.is_available(), ts.cuda.get_device_name())
print("cudnn available:", c.is_available(), "version:", c.version(), "error:", c.load_error() or "-")
for dt in (ts.bfloat16, ts.float16, ts.float32):
    q = ts.randn(2, 4, 128, 64, device="cuda").astype(dt).requires_grad_(True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True, dropout_p=0.1)
    fwd, why = b.last_attention_path(), b._cudnn_sdp_status()
    out.sum().backward()
    ts.cuda.synchronize()
    print(f"{dt}: forward on {fwd} ({why or 'ok'}), backward on {b.last_attention_path()}"
          f" ({b._cudnn_sdp_status() or 'ok'})")
PY
if [[ $WHAT == test || $WHAT == all ]]; then
  python3 -X faulthandler -m pytest tests/cuda/test_cuda_attention_cudnn.py tests/cuda/test_cuda_attention.py \
    -q -p no:cacheprovider --timeout 300 -k "${K:-}" 2>&1 | tee "$OUT/test_sdpa.log" | tail -5
  grep -E "^(FAILED|ERROR)|Fatal|Error:" "$OUT/test_sdpa.log" | head -40
fi
if [[ $WHAT == bench || $WHAT == all ]]; then
  timeout 300 python3 benchmarks/bench_cuda_attention.py 20 --quick 2>&1 | tee "$OUT/bench_sdpa.md"
fi
if [[ $WHAT == full ]]; then
  timeout 500 python3 benchmarks/bench_cuda_attention.py 20 2>&1 | tee "$OUT/bench_sdpa.md"
fi
