#!/usr/bin/env bash
# Builds tessera with the CUDA backend on the GPU machine, runs the CUDA tests and the CUDA
# benchmark; logs go to $OUT. Usage (device tool, .whl carried): bash benchmarks/run_cuda_device.sh [what]
# what: build | test | bench | sanitize | profile | gpt | all (default all: build, test, bench). Reuses build/cuda between calls on a warm machine.
set -uo pipefail
WHAT=${1:-all}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD/python
export PYTHONUNBUFFERED=1
ARCHS=${ARCHS:-90}
if [[ $WHAT == build || $WHAT == all ]]; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
  t0=$(date +%s)
  # cuDNN's fused attention needs the cuDNN frontend's headers: the nvidia-cudnn-frontend wheel
  # in .whl/ installs them to /tmp/site/include (Note [cuDNN attention]).
  FE=()
  [[ -f /tmp/site/include/cudnn_frontend.h ]] && FE=(-DTESSERA_CUDNN_FRONTEND_INCLUDE=/tmp/site/include)
  cmake -S . -B build/cuda -G Ninja -DTESSERA_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" ${FE[@]+"${FE[@]}"} \
    -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > "$OUT/cmake.log" 2>&1 || { tail -30 "$OUT/cmake.log"; exit 1; }
  ninja -C build/cuda -j"$(nproc)" -k 0 > "$OUT/build.log" 2>&1 || { grep -E "error|Error" -A3 "$OUT/build.log" | head -60; exit 1; }
  echo "build took $(( $(date +%s) - t0 )) s (archs $ARCHS)" | tee "$OUT/build_time.txt"
  grep -c "warning" "$OUT/build.log" | sed 's/^/warnings: /'
fi
python3 -c "import tessera as ts; print(ts.__version__, ts.cuda.is_available(), ts.cuda.get_device_name())" || exit 1
if [[ $WHAT == test || $WHAT == all ]]; then
  python3 -X faulthandler -m pytest tests/cuda/test_cuda.py -q -p no:cacheprovider --timeout 300 -k "${K:-}" 2>&1 | tee "$OUT/test_cuda.log" | tail -5
  grep -E "^(FAILED|ERROR)|Fatal|line [0-9]+ in test_" "$OUT/test_cuda.log" | head -40
fi
if [[ $WHAT == debug ]]; then
  cuda-gdb -batch -ex run -ex "bt 12" --args python3 -m pytest tests/cuda/test_cuda.py -q -p no:cacheprovider \
    -k "${K:-out_of_memory}" 2>&1 | grep -E "^#|signal|SIG" | head -30
fi
if [[ $WHAT == sanitize ]]; then
  # A representative subset (memcheck slows every kernel ~100x): copies, views, every kernel
  # family in float32, matmul, streams, pinned copies, autograd.
  compute-sanitizer --tool memcheck --print-limit 20 python3 -m pytest tests/cuda/test_cuda.py -q \
    -p no:cacheprovider -k "${K:-round_trip or strided or (ops_match_cpu and float32) or \
(reductions and float32) or matmul_matches or streams or pinned or autograd or scalars}" \
    2>&1 | tee "$OUT/memcheck.log" | tail -6
fi
if [[ $WHAT == profile ]]; then
  (cd benchmarks && python3 profile_cuda_gpt.py 2>&1 | tee "$OUT/profile_gpt.txt" | head -60)
  which nsys && (cd benchmarks && nsys profile -o "$OUT/gpt" --stats=true python3 profile_cuda_gpt.py --steps 2 \
    > "$OUT/nsys.txt" 2>&1; grep -A40 "cuda_gpu_kern_sum" "$OUT/nsys.txt" | head -60)
fi
if [[ $WHAT == gpt ]]; then
  (cd benchmarks && python3 bench_cuda_gpt.py 2>&1 | tail -5)
fi
if [[ $WHAT == bench || $WHAT == all ]]; then
  python3 benchmarks/bench_cuda.py --markdown "$OUT/bench_cuda.md" 2>&1 | tail -30
fi
