// The determinant pieces from a batch of LU factors (cuSOLVER getrf / cuBLAS getrfBatched),
// computed on the device like the CPU kernel's loop (cpu/lapack_kernels.cpp: cpu_det).
#pragma once
#include "core/tensor.h"

namespace ts::cuda {

// lu (B, n, n) column-major LU factors, piv (B, n) int32 1-based pivots; writes sign (B) of
// lu's dtype, logabs (B) real, det (B). One thread per matrix: n is a loop, B the grid.
void launch_lu_det(const Tensor& lu, const Tensor& piv, const Tensor& sign, const Tensor& logabs,
                   const Tensor& det);

}  // namespace ts::cuda
