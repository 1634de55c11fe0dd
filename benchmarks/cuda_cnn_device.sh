#!/usr/bin/env bash
# Issue 18 on the GPU machine: builds tessera with the CUDA backend, runs the CUDA convolution /
# pooling / batch-norm tests (tests/cuda/test_cuda_conv.py) and the CNN benchmark
# (benchmarks/bench_cuda_cnn.py); everything lands in $OUT. From the repo root:
#   bash benchmarks/cuda_cnn_device.sh [all|build|test|bench]     (carry .whl as for run_cuda_device.sh)
# cuDNN: loaded at run time from the nvidia-cudnn-cu13 package that PyTorch's wheel brings
# (python3 -c "import nvidia.cudnn"); a nvidia_cudnn_cu13-*.whl in .whl/ is installed too (but
# that wheel is ~500 MB, over the device tool's 64 MiB carry limit), or set TESSERA_CUDNN_PATH.
# Files in $OUT (8 at most come back): gpu.txt cmake.log build.log build_time.txt (the build),
# cudnn.txt, test_cuda_conv.log, bench_cuda_cnn.json, bench_cuda_cnn.md.
set -uo pipefail
WHAT=${1:-all}
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export PYTHONPATH=/tmp/site:$PWD/python
export PYTHONUNBUFFERED=1
ln -sf ../../build/cuda/_C.cpython-312-x86_64-linux-gnu.so python/tessera/
if [[ $WHAT == build || $WHAT == all ]]; then
  # run_cuda_device.sh installs .whl/*.whl into /tmp/site, configures and builds build/cuda.
  ARCHS=${ARCHS:-90} bash benchmarks/run_cuda_device.sh build || exit 1
else
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
fi
grep -i "cudnn" "$OUT/cmake.log" 2>/dev/null | tee "$OUT/cudnn.txt"
python3 - <<'EOF' 2>&1 | tee -a "$OUT/cudnn.txt"
import tessera as ts
c = ts.backends.cudnn
print("tessera", ts.__version__, "cuda", ts.cuda.is_available(), ts.cuda.get_device_name())
print("cudnn available:", c.is_available(), "version:", c.version(), "error:", c.load_error() or "-")
try:
    import importlib.util
    spec = importlib.util.find_spec("nvidia.cudnn")
    print("nvidia.cudnn at", list(spec.submodule_search_locations) if spec else None)
except Exception as e:  # noqa: BLE001
    print("nvidia.cudnn not importable:", e)
x = ts.randn(8, 16, 32, 32, device="cuda")
w = ts.randn(32, 16, 3, 3, device="cuda")
y = ts.nn.functional.conv2d(x, w, padding=1)
ts.cuda.synchronize()
print("conv2d ran through:", c.last_conv_path())
c.enabled = False
ts.nn.functional.conv2d(x, w, padding=1)
ts.cuda.synchronize()
print("with cudnn.enabled=False:", c.last_conv_path())
EOF
if [[ $WHAT == test || $WHAT == all ]]; then
  python3 -X faulthandler -m pytest tests/cuda/test_cuda_conv.py -q -p no:cacheprovider --timeout 300 \
    -k "${K:-}" 2>&1 | tee "$OUT/test_cuda_conv.log" | tail -5
  grep -E "^(FAILED|ERROR)|Fatal|Error:" "$OUT/test_cuda_conv.log" | head -40
  # The shared cuBLAS handle (matmul_cuda.cpp now uses cublas_util's): a quick matmul check.
  python3 -m pytest tests/cuda/test_cuda.py -q -p no:cacheprovider --timeout 300 -k "matmul" 2>&1 \
    | tail -2 | tee -a "$OUT/test_cuda_conv.log"
fi
if [[ $WHAT == bench || $WHAT == all ]]; then
  timeout 420 python3 benchmarks/bench_cuda_cnn.py --both ${BENCH_ARGS:-} \
    --out "$OUT/bench_cuda_cnn.json" --markdown "$OUT/bench_cuda_cnn.md" 2>&1 | tail -45
fi
