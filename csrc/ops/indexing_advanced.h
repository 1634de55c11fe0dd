// Advanced (NumPy "fancy") indexing: integer arrays and boolean masks mixed with basic items,
// plus the PyTorch-style gather/scatter family built on the same offset-copy kernels.
#pragma once
#include <vector>

#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "ops/indexing_basic.h"

namespace ts {

// One item of an advanced key: a basic item, or an index array (any integer dtype, or bool).
struct AdvItem {
  IndexItem item;
  Tensor array;  // defined <=> this item is an array
};
using AdvKey = std::vector<AdvItem>;

// Limits of the device-addressed gather (OffsetCopy::device_indices): more index arrays or a
// broadcast shape of more dims takes the host-planned path.
constexpr int kMaxDeviceIndexArrays = 4, kMaxDeviceIndexDims = 8;

// Copies elements between a tensor `x` addressed through per-position element offsets and a
// tensor `y` laid out as (positions, rest...): for position b, x at offsets[b] (+ rest strides)
// pairs with y at b * y_bstride (+ rest strides). Strides are in elements.
struct OffsetCopy {
  char* x = nullptr;
  const int64_t* offsets = nullptr;
  int64_t n = 0;  // number of positions
  char* y = nullptr;
  int64_t y_bstride = 0;
  Shape rest;
  Strides x_rest, y_rest;
  int64_t itemsize = 0;
  // Instead of `offsets`: one int64 index array addressing an axis of this size and stride
  // (saves materializing offsets for the common x[idx]).
  const int64_t* index = nullptr;
  int64_t index_size = 0, index_stride = 0;
  bool distinct = false;  // put: no two positions address the same element (parallel put)
  // Gather addressed by index arrays in device memory (Note [CUDA advanced indexing]), used
  // instead of `offsets`/`index` when non-empty: position b (row-major over `bshape`) adds
  // normalized(array k at b) * stride k over the arrays. The kernel range-checks each index,
  // reporting a bad one as a deferred device error.
  struct DeviceIndex {
    const int64_t* data = nullptr;  // device memory; null: the host value `value` (an int key)
    int64_t value = 0;
    int64_t size = 0, stride = 0;  // the indexed axis of x
    Strides bstrides;              // the array's element strides broadcast to bshape
  };
  std::vector<DeviceIndex> device_indices;
  Shape bshape;
};
// gather: y <- x (parallel); returns the first position whose `index` is out of range, or -1.
// put: x <- y in position order (so the last repeated index wins); `index` must be valid.
using OffsetCopyKernel = int64_t (*)(const OffsetCopy& c, bool put);
// put_add: x[offsets[b]] += y[b] for contiguous y of x's dtype (serial: repeated indices add).
using PutAddKernel = void (*)(const Tensor& x, const int64_t* offsets, const Tensor& y);
// offsets[b] += normalized(index[b]) * stride, for a contiguous int64 index (only validates
// when offsets is null). Returns the position of the first out-of-range index, or -1.
using IndexOffsetsKernel = int64_t (*)(const Tensor& index, int64_t size, int64_t stride,
                                       int64_t* offsets);
// Element offsets into x for every position of a contiguous int64 `index` of x's rank whose
// values address axis `dim` (torch.gather's addressing). Returns the first bad position or -1.
using DimOffsetsKernel = int64_t (*)(const Tensor& index, int64_t dim, const Tensor& x,
                                     int64_t* offsets);
// torch.gather straight into a contiguous `out` of index's shape, with the same addressing
// (indices in [0, size): torch.gather takes no negative ones).
using GatherDimKernel = int64_t (*)(const Tensor& x, int64_t dim, const Tensor& index,
                                    const Tensor& out);
// scatter_add with torch.gather's addressing: x at (index[p] along dim, p's other coords)
// += src[p] for a contiguous int64 `index` of x's rank and a contiguous `src` of index's shape
// and x's dtype. Device kernels only (the CPU adds serially through dim_offsets + put_add);
// returns the first bad position or -1 (a device reports it as a deferred device error).
using ScatterAddDimKernel = int64_t (*)(const Tensor& x, int64_t dim, const Tensor& index,
                                        const Tensor& src);
// Coordinates (count, ndim) of the true elements of a contiguous bool tensor.
using NonzeroKernel = Tensor (*)(const Tensor& mask);
// Boolean-mask fast path for x[mask] / x[mask] = v with x and mask contiguous and of one
// shape: per-block prefix counts of the mask, then a compress (y <- x) or a masked put
// (x <- y, y of stride 0 for a scalar value).
using MaskBlockStartsKernel = std::vector<int64_t> (*)(const Tensor& mask);
using MaskCopyKernel = void (*)(const Tensor& x, const Tensor& mask,
                                const std::vector<int64_t>& start, char* y, int64_t ystride,
                                bool put);
// Reports (as a deferred device error naming `op`, Note [Deferred device errors]) the first
// value of a contiguous int64 device `index` outside [lo, hi), without a synchronization.
using IndexRangeCheckKernel = void (*)(const Tensor& index, int64_t lo, int64_t hi, const char* op);
TS_DECLARE_STUB(IndexRangeCheckKernel, index_range_check_stub);
TS_DECLARE_STUB(MaskBlockStartsKernel, mask_block_starts_stub);
TS_DECLARE_STUB(MaskCopyKernel, mask_copy_stub);
TS_DECLARE_STUB(OffsetCopyKernel, offset_copy_stub);
TS_DECLARE_STUB(PutAddKernel, put_add_stub);
TS_DECLARE_STUB(IndexOffsetsKernel, index_offsets_stub);
TS_DECLARE_STUB(DimOffsetsKernel, dim_offsets_stub);
TS_DECLARE_STUB(GatherDimKernel, gather_dim_stub);
TS_DECLARE_STUB(ScatterAddDimKernel, scatter_add_dim_stub);
TS_DECLARE_STUB(NonzeroKernel, nonzero_stub);

bool is_basic(const AdvKey& key);
// x[key] with NumPy's full semantics; a copy whenever the key holds an array.
Tensor index_advanced(const Tensor& x, const AdvKey& key);

// An integer index tensor as int64. A uint64 index of 2**63 or more is out of bounds of any
// dim: IndexError naming `op` (the cast wrapped it to a negative index that counted from the
// end, so x[[2**64 - 1]] was x[-1]).
Tensor index_as_int64(const Tensor& index, const char* op);
// x[key] = value (value broadcast to the selection and cast; repeated indices: last wins).
void index_put_advanced(const Tensor& x, const AdvKey& key, const Tensor& value);

// (count, ndim) int64 coordinates of the nonzero elements (torch's x.nonzero()).
Tensor nonzero(const Tensor& x);
// torch.gather / scatter / scatter_add / index_select / index_add (out of place).
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
               bool add = false);
// In place into x (scatter_ / scatter_add_).
void scatter_(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// torch.index_fill: x with the slices at `index` (an integer vector, negative counted from the
// end) along `dim` set to `value` (0-d, cast to x's dtype); differentiable in x and value.
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& value);
// torch.index_copy: x with x.select(dim, index[i]) replaced by source.select(dim, i); source
// has x's dtype and x's shape with `dim` of len(index). Differentiable in x and source.
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
// out[perm[j]] = values[j] for a permutation `perm` of range(n) (argsort's result), in
// parallel: the inverse-permutation scatter behind unique_inverse. IndexError for an index
// outside [0, n); ValueError unless perm and values are 1-d of one length.
Tensor scatter_permutation(const Tensor& perm, const Tensor& values);
// torch.gather/scatter's addressing, checked (RuntimeError for an index out of range, naming
// `op`): the element offsets into x (0-d x seen as 1-d) of every position of `index`, whose
// contiguous int64 copy is returned; `dim` comes back normalized. With `src`, index may not
// be larger than it in any dim.
Tensor scatter_offsets(const char* op, const Tensor& x, int64_t& dim, const Tensor& index,
                       const Tensor* src, std::vector<int64_t>& off);
// numpy.take_along_axis: x and indices broadcast against each other except along `axis`.
// Indices are in [0, n) (gather's RuntimeError otherwise); with negative_from_end (the
// Python entry points: NumPy, the standard and torch.take_along_dim with a dim) also in
// [-n, 0), counted from the end.
Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis,
                       bool negative_from_end = false);
// A 0-d or 1-d integer index into a dimension `dim` of size n as a 1-d vector, checked to lie
// in [0, n) (negative_ok: [-n, n), returned with negatives counted from the end): PyTorch's
// IndexError naming `op` and the first bad value otherwise (index_select, index_add, ...).
// A device index is checked by a kernel without a synchronization: the error comes at the
// next one (Note [Deferred device errors]), and the kernels that use the index stay in bounds.
Tensor index_in_range(const char* op, const Tensor& index, int64_t dim, int64_t n,
                      bool negative_ok);

}  // namespace ts
