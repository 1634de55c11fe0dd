// Creation ops with computed contents: arange, linspace, eye, tril/triu.
#pragma once
#include <complex>
#include <vector>

#include "core/scalar.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"

namespace ts {

// out[i] = start + i * step (integers exactly in int64, floats in double).
using ArangeKernel = void (*)(const Tensor& out, const Scalar& start, const Scalar& step);
// out[i] = start + i * step in double precision; out[n-1] = stop when `last_is_stop`.
using LinspaceKernel = void (*)(const Tensor& out, std::complex<double> start,
                                std::complex<double> step, std::complex<double> stop,
                                bool last_is_stop);
// Zeroes, in a contiguous (batch, rows, cols) tensor, the elements outside the band kept by
// tril (col - row <= k) or triu (col - row >= k).
using TriZeroKernel = void (*)(const Tensor& out, int64_t k, bool upper);
TS_DECLARE_STUB(ArangeKernel, arange_stub);
TS_DECLARE_STUB(LinspaceKernel, linspace_stub);
TS_DECLARE_STUB(TriZeroKernel, tri_zero_stub);

// NumPy's length rule: ceil((stop - start) / step), at least 0. Ints stay exact. Float
// arguments with an integer dtype follow PyTorch (trunc(start) + i * trunc(step)).
Tensor arange(const Scalar& start, const Scalar& stop, const Scalar& step, DType dtype,
              Device device = {});
// Integer dtypes follow PyTorch (truncated ends, the two halves stepped from either end).
Tensor linspace(std::complex<double> start, std::complex<double> stop, int64_t num, DType dtype,
                bool endpoint, Device device = {});
// base ** linspace(start, stop, num) computed in double precision, then cast to dtype.
Tensor logspace(double start, double stop, int64_t num, double base, DType dtype,
                Device device = {});
Tensor eye(int64_t n_rows, int64_t n_cols, int64_t k, DType dtype, Device device = {});
// The (2, N) row and column indices of the lower (upper) triangle of a row x col matrix, on
// and below (above) diagonal offset, in row-major order.
Tensor tri_indices(int64_t row, int64_t col, int64_t offset, bool upper, DType dtype,
                   Device device = {});
// Coordinate grids from 0-D/1-D tensors: broadcast views, shape (N2, N1, N3, ...) with xy
// indexing, (N1, N2, N3, ...) with ij.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, bool xy);
Tensor tril(const Tensor& x, int64_t k, const char* op = "tril");  // op: for errors
Tensor triu(const Tensor& x, int64_t k, const char* op = "triu");

}  // namespace ts
