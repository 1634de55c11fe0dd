// TS_SIMD_CLONES: compile a loop for AVX-512, AVX2 and baseline x86-64 and pick at load time.
#pragma once

// Note [SIMD clones]: the build targets baseline x86-64 (SSE2), so the hot contiguous loops
// (cpu/loops.h, the column sweeps of cpu/reduce_loops.h) are also compiled for AVX2 and
// AVX-512 and picked at load time. Wider vectors keep more cache lines in flight, which
// matters most for short runs (the tiles of Note [Tiled iteration]). The build passes -ffp-contract=off, so no clone fuses a * b + c into an FMA:
// every clone computes the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TS_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TS_SIMD_CLONES
#endif
