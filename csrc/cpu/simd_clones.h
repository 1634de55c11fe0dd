// TS_SIMD_CLONES / TS_SIMD_CLONES_WIDE: compile a loop for wider vector ISAs than the build's
// baseline and pick the best one the CPU has at load time.
#pragma once

// Note [SIMD clones]: the build targets baseline x86-64 (SSE2), so the hot contiguous loops
// are also compiled for wider vectors and picked at load time. The elementwise loops
// (cpu/loops.h) stop at AVX2: they move memory, and on the AMD EPYC (Zen 4) we build and
// benchmark on their AVX-512 clones ran 4-14% slower from L3 and memory (float32 add of 2^20
// elements 0.96x NumPy with AVX-512, 1.02-1.06x with AVX2; 2^22 0.96x -> 1.06x), and tiles of
// 512^2 and 1024^2 walked no faster with them — the reason GCC's own tunings for AVX-512 CPUs
// prefer 256-bit vectors. The column sweeps of cpu/reduce_loops.h, which add four rows per
// store, stay ahead with AVX-512 (2048^2 column sums 1.0-1.6x NumPy vs 0.9-1.1x) and keep it.
// Kernels that need AVX-512 for what it does, not for width (register transposes, streamed
// 64-byte stores), are written for it explicitly. The build passes -ffp-contract=off, so no
// clone fuses a * b + c into an FMA: every clone computes the same bits.
// TESSERA_NO_SIMD_CLONES (set by the sanitizer build, tests/sanitize/run.sh) compiles the
// baseline only: the clones are the same source, and compiling each loop once takes 16% off
// the instrumented -O0 build (12.8 -> 10.7 CPU-minutes), which CI runs on 2 cores.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(TESSERA_NO_SIMD_CLONES)
#define TS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#define TS_SIMD_CLONES_WIDE __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_SIMD_CLONES
#define TS_SIMD_CLONES_WIDE
#endif
