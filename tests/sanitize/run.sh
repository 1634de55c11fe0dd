#!/usr/bin/env bash
# ASan + UBSan run of the core, indexing, autograd and interop tests (issue 22).
#
# Builds _C with -DTESSERA_SANITIZE=address,undefined into its own build dir (default
# build/sanitize; the dev build and the installed module are untouched), then runs the tests
# against that module with libasan preloaded (the Python interpreter is not instrumented).
# Any ASan report or UBSan finding aborts the test process, so pytest fails.
#
#   tests/sanitize/run.sh                 # build + the default test subset
#   tests/sanitize/run.sh tests/test_x.py # build + the given pytest arguments
# Env: TS_SANITIZE_BUILD (build dir), TS_SANITIZE_JOBS (ninja -j, default: nproc).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
build="${TS_SANITIZE_BUILD:-$root/build/sanitize}"
jobs="${TS_SANITIZE_JOBS:-$(nproc)}"
start=$(date +%s)

if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DTESSERA_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DTESSERA_SANITIZE=address,undefined \
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

asan="$(${CXX:-g++} -print-file-name=libasan.so)"
export LD_PRELOAD="$asan"
# Python's own allocations are never freed at exit: leak checking would only report those.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONPATH="$pkg"
export TESSERA_SANITIZED=1  # tests that allocate terabytes on purpose skip themselves
if [ $# -eq 0 ]; then
  set -- tests/test_core.py tests/test_indexing.py tests/test_indexing_advanced.py \
    tests/test_autograd_engine.py tests/test_autograd_inplace.py tests/test_interop.py \
    tests/test_hardening_core.py tests/test_view_dtype.py
fi
python -c "import tessera, sys; assert '$build' in tessera._C.__file__, tessera._C.__file__"
python -m pytest -x -q -p no:cacheprovider "$@"
echo "sanitize: tests took $(( $(date +%s) - built )) s, total $(( $(date +%s) - start )) s"
