#!/usr/bin/env bash
# ASan + UBSan run of the core, indexing, autograd, interop, hardening and loader tests (issue 22;
# docs/design.md "Hardening of the core"). CI (.ci/run) runs it after the main test suite.
#
# Builds _C with -DTESSERA_SANITIZE=address,undefined into its own build dir (default
# build/sanitize; the dev build and the installed module are untouched), then runs the tests
# against that module. The Python interpreter is not instrumented, so libasan is preloaded, and
# libstdc++ with it: ASan intercepts __cxa_throw and must find the real one when it starts (the
# interpreter itself does not link libstdc++; without it the first C++ exception aborts with
# "CHECK failed: ... real___cxa_throw"). Any ASan report or UBSan finding aborts the process
# (halt_on_error), so pytest fails; pytest runs with --capture=sys, so that the report, which the
# runtime writes to fd 2, is not swallowed by the capture of a process that dies.
#
#   tests/sanitize/run.sh                 # build + the default test subset
#   tests/sanitize/run.sh tests/test_x.py # build + the given pytest arguments
# Env: TS_SANITIZE_BUILD (build dir), TS_SANITIZE_JOBS (ninja -j, default: nproc),
#      TS_SANITIZE_OPT (optimisation flags, default "-O0 -g1": a third of -O1's compile time,
#      which decides whether this fits CI's time budget; the tests run about 1.5x slower).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${TS_SANITIZE_BUILD:-$root/build/sanitize}"
jobs="${TS_SANITIZE_JOBS:-$(nproc)}"
opt="${TS_SANITIZE_OPT:--O0 -g1}"
start=$(date +%s)

for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { echo "sanitize: $tool not found (pip install $tool)"; exit 2; }
done
python -c "import pybind11" 2>/dev/null || { echo "sanitize: pip install pybind11"; exit 2; }
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DTESSERA_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt" -DTESSERA_SANITIZE=address,undefined \
    -Dpybind11_DIR="$(python -m pybind11 --cmakedir)" >/dev/null
fi
ninja -C "$build" -j"$jobs" _C | tail -1
built=$(date +%s)
echo "sanitize: build took $((built - start)) s"

# A package dir whose tessera is the source tree's Python files plus the sanitized _C.
pkg="$build/python"
rm -rf "$pkg" && mkdir -p "$pkg/tessera"
for f in "$root"/python/tessera/*; do
  case "$(basename "$f")" in _C.*) ;; *) ln -s "$f" "$pkg/tessera/" ;; esac
done
ln -s "$build"/_C.*.so "$pkg/tessera/"

cxx="${CXX:-g++}"
export LD_PRELOAD="$($cxx -print-file-name=libasan.so) $($cxx -print-file-name=libstdc++.so)"
# detect_leaks=0: Python's own allocations are never freed at exit, leak checking would only
# report those. allocator_may_return_null: a huge request is a MemoryError (as without ASan),
# not an ASan abort.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONPATH="$pkg"
export TESSERA_SANITIZED=1  # tests that need RLIMIT_AS or allocate terabytes skip themselves
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
if [ $# -eq 0 ]; then
  set -- tests/core/test_tensor.py tests/ops/indexing/test_indexing.py tests/ops/indexing/test_indexing_advanced.py \
    tests/autograd/test_engine.py tests/autograd/test_inplace.py tests/interop/test_interop.py \
    tests/core/test_view_dtype.py tests/ops/reduction/test_cumulative.py tests/ops/reduction/test_reduction.py \
    tests/hardening/test_hardening_core.py tests/hardening/test_hardening_inputs.py tests/serialization/test_serialization.py \
    tests/serialization/test_checkpoint_malformed.py tests/serialization/test_checkpoint_security.py
fi
python -c "import tessera, sys; assert '$build' in tessera._C.__file__, tessera._C.__file__"
status=0
python -m pytest -x -q -p no:cacheprovider --capture=sys "$@" || status=$?
echo "sanitize: tests took $(( $(date +%s) - built )) s, total $(( $(date +%s) - start )) s"
exit $status
