// CUDA kernels for advanced indexing's element copies, gather and scatter_add (Note [CUDA
// advanced indexing] in ops/indexing_advanced.cpp). With an index on the device (x[idx],
// take, gather, scatter_add) the kernels compute the offsets themselves and report bad
// indices as deferred device errors; otherwise the positions' offsets come from the host.
#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_select.cuh>
#include <cub/version.cuh>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/device_backend.h"
#include "cuda/device_error.h"
#include "cuda/device_types.cuh"
#include "cuda/loops.cuh"
#include "ops/indexing_advanced.h"

namespace ts::cuda {
namespace {

constexpr int kMaxRest = 8;

struct RestGeom {
  int nd = 0;
  int64_t sizes[kMaxRest], xs[kMaxRest], ys[kMaxRest];  // elements
  int64_t count = 1;
};

RestGeom rest_geom(const OffsetCopy& c) {
  RestGeom r;
  TS_CHECK(c.rest.size() <= kMaxRest, NotImplementedError, "advanced indexing on CUDA: at most ",
           kMaxRest, " trailing dims");
  r.nd = static_cast<int>(c.rest.size());
  for (int i = 0; i < r.nd; ++i) {
    r.sizes[i] = c.rest[i];
    r.xs[i] = c.x_rest[i];
    r.ys[i] = c.y_rest[i];
    r.count *= c.rest[i];
  }
  return r;
}

// Element offsets (x's, y's) of rest element `rem` (row-major over the rest block).
__device__ __forceinline__ void rest_offsets(const RestGeom& r, int64_t rem, int64_t& xo,
                                             int64_t& yo) {
  xo = yo = 0;
  for (int d = r.nd - 1; d >= 0; --d) {
    const int64_t i = rem % r.sizes[d];
    rem /= r.sizes[d];
    xo += i * r.xs[d];
    yo += i * r.ys[d];
  }
}

unsigned blocks_for(int64_t threads) {
  return static_cast<unsigned>((threads + kBlock - 1) / kBlock);
}

// Calls Launch<E>::run(args...) with E the unsigned type of the element size (16: cf64).
template <template <class> class Launch, class... Args>
void by_itemsize(int64_t itemsize, const Args&... args) {
  switch (itemsize) {
    case 1:
      return Launch<uint8_t>::run(args...);
    case 2:
      return Launch<uint16_t>::run(args...);
    case 4:
      return Launch<uint32_t>::run(args...);
    case 8:
      return Launch<uint64_t>::run(args...);
    default:
      return Launch<cf64>::run(args...);
  }
}

// ---- element copies by host-computed offsets

// One thread per (position, rest element). off[b] < 0 marks a position to skip (a put whose
// element a later position overwrites: the last write wins, as on the CPU).
template <class E>
__global__ void offset_copy_kernel(E* x, E* y, const int64_t* off, int64_t n, int64_t ybs,
                                   RestGeom r, bool put) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * r.count) return;
  const int64_t b = t / r.count;
  int64_t xo, yo;
  rest_offsets(r, t - b * r.count, xo, yo);
  const int64_t o = off[b];
  if (o < 0) return;
  if (put)
    x[o + xo] = y[b * ybs + yo];
  else
    y[b * ybs + yo] = x[o + xo];
}

Tensor upload(const std::vector<int64_t>& v, Device d) {
  Tensor t = Tensor::empty(Shape{static_cast<int64_t>(v.size())}, DType::Int64, d);
  if (!v.empty())
    cuda_backend()->copy_bytes(t.data_ptr(), d, v.data(), Device{}, t.nbytes(), false);
  return t;
}

template <class E>
struct OffsetCopyLaunch {
  static void run(const OffsetCopy& c, const std::vector<int64_t>& off, Device d, bool put) {
    const RestGeom r = rest_geom(c);
    if (r.count == 0 || c.n == 0) return;
    const Tensor od = upload(off, d);
    offset_copy_kernel<E><<<blocks_for(c.n * r.count), kBlock, 0, current_stream(d.index)>>>(
        reinterpret_cast<E*>(c.x), reinterpret_cast<E*>(c.y), od.data<int64_t>(), c.n, c.y_bstride,
        r, put);
    TS_CUDA_CHECK_LAUNCH();
  }
};

// ---- addressing from a device index (Note [CUDA advanced indexing])

// Where a kernel reports a bad index (Note [Deferred device errors]).
struct ErrorSink {
  DeviceErrorSlot* slot;
  unsigned* claim;
  int32_t code;
};
ErrorSink error_sink(Device d, int32_t code) {
  return ErrorSink{device_error_slot(d.index), device_error_claim(d.index), code};
}

// A device index entry normalized like the CPU (negative counts from the end). An out-of-range
// one is reported (the first report of all wins) and clamped into [0, size), so nothing
// outside x is touched; false when there is nothing to clamp to (size 0).
__device__ __forceinline__ bool checked_index(int64_t raw, int64_t size, bool report,
                                              const ErrorSink& err, int64_t& i) {
  i = raw < 0 ? raw + size : raw;
  if (i >= 0 && i < size) return true;
  if (report) report_device_error(err.slot, err.claim, err.code, raw, -size, size);
  if (size == 0) return false;
  i = i < 0 ? 0 : size - 1;
  return true;
}

// The index arrays of a device-addressed gather (OffsetCopy::device_indices), by value.
struct MultiIndex {
  int k = 0, nd = 0;
  int64_t bsizes[kMaxDeviceIndexDims];
  const int64_t* data[kMaxDeviceIndexArrays];  // null: value[k] (an int of the key)
  int64_t value[kMaxDeviceIndexArrays], size[kMaxDeviceIndexArrays], stride[kMaxDeviceIndexArrays];
  int64_t bstr[kMaxDeviceIndexArrays][kMaxDeviceIndexDims];  // elements
};

MultiIndex multi_index(const OffsetCopy& c) {
  MultiIndex m;
  TS_CHECK(static_cast<int64_t>(c.device_indices.size()) <= kMaxDeviceIndexArrays &&
               static_cast<int64_t>(c.bshape.size()) <= kMaxDeviceIndexDims,
           RuntimeError, "advanced indexing on CUDA: too many index arrays or dims");
  m.k = static_cast<int>(c.device_indices.size());
  m.nd = static_cast<int>(c.bshape.size());
  for (int d = 0; d < m.nd; ++d) m.bsizes[d] = c.bshape[d];
  for (int k = 0; k < m.k; ++k) {
    const OffsetCopy::DeviceIndex& di = c.device_indices[k];
    m.data[k] = di.data;
    m.value[k] = di.value;
    m.size[k] = di.size;
    m.stride[k] = di.stride;
    for (int d = 0; d < m.nd; ++d) m.bstr[k][d] = di.data ? di.bstrides[d] : 0;
  }
  return m;
}

// x's element offset of broadcast position b: the sum of every array's checked index times
// its axis stride; false when some axis is empty (nothing to clamp to).
__device__ __forceinline__ bool multi_offset(const MultiIndex& m, int64_t b, bool report,
                                             const ErrorSink& err, int64_t& off) {
  int64_t pos[kMaxDeviceIndexArrays] = {};
  for (int d = m.nd - 1; d >= 0; --d) {
    const int64_t c = b % m.bsizes[d];
    b /= m.bsizes[d];
    for (int k = 0; k < m.k; ++k) pos[k] += c * m.bstr[k][d];
  }
  off = 0;
  bool ok = true;
  for (int k = 0; k < m.k; ++k) {
    int64_t i;
    ok = checked_index(m.data[k] ? m.data[k][pos[k]] : m.value[k], m.size[k], report, err, i) && ok;
    off += i * m.stride[k];
  }
  return ok;
}

// x[arrays...]: one thread per (position, rest element); with an empty rest block (count 0)
// one thread per position only checks the indices.
template <class E>
__global__ void index_gather_kernel(const E* x, E* y, int64_t n, int64_t ybs, RestGeom r,
                                    MultiIndex m, ErrorSink err) {
  const int64_t cnt = r.count > 0 ? r.count : 1;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * cnt) return;
  const int64_t b = t / cnt, rem = t - b * cnt;
  int64_t off, xo, yo;
  if (!multi_offset(m, b, rem == 0, err, off) || r.count == 0) return;
  rest_offsets(r, rem, xo, yo);
  y[b * ybs + yo] = x[off + xo];
}

template <class E>
struct IndexGatherLaunch {
  static void run(const OffsetCopy& c, Device d, int32_t code) {
    const RestGeom r = rest_geom(c);
    const int64_t threads = c.n * (r.count > 0 ? r.count : 1);
    if (threads == 0) return;
    index_gather_kernel<E><<<blocks_for(threads), kBlock, 0, current_stream(d.index)>>>(
        reinterpret_cast<const E*>(c.x), reinterpret_cast<E*>(c.y), c.n, c.y_bstride, r,
        multi_index(c), error_sink(d, code));
    TS_CUDA_CHECK_LAUNCH();
  }
};

int64_t offset_copy_cuda(const OffsetCopy& c, bool put) {
  const Device d{DeviceType::CUDA, static_cast<int16_t>(current_device())};
  if (!c.device_indices.empty()) {
    TS_CHECK(!put, RuntimeError, "setitem on CUDA: the index must be planned on the host");
    static const int32_t code = device_error_code("index", "index");
    by_itemsize<IndexGatherLaunch>(c.itemsize, c, d, code);
    return -1;
  }
  // The positions' offsets, from the host index array or the host offsets.
  std::vector<int64_t> off(c.n);
  for (int64_t b = 0; b < c.n; ++b) {
    if (c.index) {
      int64_t i = c.index[b];
      if (i < 0) i += c.index_size;
      if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(c.index_size)) return b;
      off[b] = i * c.index_stride;
    } else {
      off[b] = c.offsets[b];
    }
  }
  if (put && !c.distinct) {  // the last write to an element wins: drop the earlier ones
    std::unordered_map<int64_t, int64_t> last;
    for (int64_t b = 0; b < c.n; ++b) last[off[b]] = b;
    for (int64_t b = 0; b < c.n; ++b)
      if (last[off[b]] != b) off[b] = -1;
  }
  by_itemsize<OffsetCopyLaunch>(c.itemsize, c, off, d, put);
  return -1;
}

// torch.gather's addressing: a contiguous int64 index of x's rank; position p's coordinates in
// the index's shape pick x's element, with the index value along `dim`.
struct DimGeom {
  int nd = 0, dim = 0;
  int64_t sizes[kMaxDims], xs[kMaxDims];  // index shape, x strides (elements)
  int64_t dim_size = 0;
};

DimGeom dim_geom(const Tensor& x, int64_t dim, const Tensor& index, const char* op) {
  TS_CHECK(index.ndim() <= kMaxDims, NotImplementedError, op, " on CUDA: at most ", kMaxDims,
           " dims, got ", index.ndim());
  DimGeom g;
  g.nd = static_cast<int>(index.ndim());
  g.dim = static_cast<int>(dim);
  g.dim_size = x.dim(dim);
  for (int d = 0; d < g.nd; ++d) {
    g.sizes[d] = index.dim(d);
    g.xs[d] = x.strides()[d];
  }
  return g;
}

// x's element offset for index position p; false when there is none (an empty axis). The
// index must lie in [0, size), as torch.gather/scatter's (no negative indices); a bad one is
// reported and clamped.
__device__ __forceinline__ bool dim_offset(const DimGeom& g, const int64_t* index, int64_t p,
                                           const ErrorSink& err, int64_t& off) {
  int64_t i = index[p];
  if (i < 0 || i >= g.dim_size) {
    report_device_error(err.slot, err.claim, err.code, i, 0, g.dim_size);
    if (g.dim_size == 0) return false;
    i = i < 0 ? 0 : g.dim_size - 1;
  }
  off = i * g.xs[g.dim];
  for (int d = g.nd - 1; d >= 0; --d) {
    const int64_t c = p % g.sizes[d];
    p /= g.sizes[d];
    if (d != g.dim) off += c * g.xs[d];
  }
  return true;
}

template <class E>
__global__ void gather_dim_kernel(const E* x, E* y, const int64_t* index, int64_t n, DimGeom g,
                                  ErrorSink err) {
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t off;
  if (p < n && dim_offset(g, index, p, err, off)) y[p] = x[off];
}

template <class E>
struct GatherDimLaunch {
  static void run(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out,
                  int32_t code) {
    const int64_t n = index.numel();
    if (n == 0) return;
    gather_dim_kernel<E><<<blocks_for(n), kBlock, 0, current_stream(x.device().index)>>>(
        reinterpret_cast<const E*>(x.data_ptr()), reinterpret_cast<E*>(out.data_ptr()),
        index.data<int64_t>(), n, dim_geom(x, dim, index, "gather"), error_sink(x.device(), code));
    TS_CUDA_CHECK_LAUNCH();
  }
};

int64_t gather_dim_cuda(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  static const int32_t code = device_error_code("gather", "index");
  by_itemsize<GatherDimLaunch>(x.itemsize(), x, dim, index, out, code);
  return -1;
}

// ---- scatter_add

template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  if constexpr (::cuda::std::is_same_v<T, int64_t> || ::cuda::std::is_same_v<T, uint64_t>)
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  else if constexpr (::cuda::std::is_same_v<T, int32_t>)
    atomicAdd(reinterpret_cast<int*>(p), static_cast<int>(v));
  else if constexpr (::cuda::std::is_same_v<T, uint32_t>)
    atomicAdd(reinterpret_cast<unsigned*>(p), static_cast<unsigned>(v));
  else if constexpr (is_dcomplex_v<T>) {
    using V = typename T::value_type;
    atomicAdd(reinterpret_cast<V*>(p), v.real());
    atomicAdd(reinterpret_cast<V*>(p) + 1, v.imag());
  } else
    atomicAdd(p, v);
}

// Note [CUDA scatter_add]: the sums into one element are atomic adds, so their order (and a
// float result's last bits) may vary from run to run and differ from the CPU's serial,
// position-ordered sum by rounding only, as with PyTorch's CUDA index_add/scatter_add.
constexpr uint32_t kAtomicSet =
    (kFloatSet | kComplexSet | (1u << int(DType::Int32)) | (1u << int(DType::Int64)) |
     (1u << int(DType::UInt32)) | (1u << int(DType::UInt64)));

template <class T>
__global__ void put_add_kernel(T* x, const int64_t* off, const T* y, int64_t n) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < n) atomic_add(x + off[b], y[b]);
}

void put_add_cuda(const Tensor& x, const int64_t* offsets, const Tensor& y) {
  cuda_visit<kAtomicSet>(x.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.numel();
    if (n == 0) return;
    const Tensor od = upload(std::vector<int64_t>(offsets, offsets + n), x.device());
    put_add_kernel<T><<<blocks_for(n), kBlock, 0, current_stream(x.device().index)>>>(
        reinterpret_cast<T*>(x.data_ptr()), od.data<int64_t>(),
        reinterpret_cast<const T*>(y.data_ptr()), n);
    TS_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
__global__ void scatter_add_dim_kernel(T* x, const T* src, const int64_t* index, int64_t n,
                                       DimGeom g, ErrorSink err) {
  const int64_t p = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t off;
  if (p < n && dim_offset(g, index, p, err, off)) atomic_add(x + off, src[p]);
}

int64_t scatter_add_dim_cuda(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  static const int32_t code = device_error_code("scatter_add", "index");
  cuda_visit<kAtomicSet>(x.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = index.numel();
    if (n == 0) return;
    scatter_add_dim_kernel<T><<<blocks_for(n), kBlock, 0, current_stream(x.device().index)>>>(
        reinterpret_cast<T*>(x.data_ptr()), reinterpret_cast<const T*>(src.data_ptr()),
        index.data<int64_t>(), n, dim_geom(x, dim, index, "scatter_add"),
        error_sink(x.device(), code));
    TS_CUDA_CHECK_LAUNCH();
  });
  return -1;
}

// ---- index range checks without a synchronization (index_select, index_add, ...)

__global__ void index_range_kernel(const int64_t* index, int64_t n, int64_t lo, int64_t hi,
                                   ErrorSink err) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n && (index[t] < lo || index[t] >= hi))
    report_device_error(err.slot, err.claim, err.code, index[t], lo, hi);
}

void index_range_check_cuda(const Tensor& index, int64_t lo, int64_t hi, const char* op) {
  static std::mutex mu;
  static std::unordered_map<std::string, int32_t> codes;
  int32_t code;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = codes.find(op);
    code = it != codes.end() ? it->second : (codes[op] = device_error_code(op, "index"));
  }
  const int64_t n = index.numel();
  if (n == 0) return;
  DeviceGuard g(index.device().index);
  index_range_kernel<<<blocks_for(n), kBlock, 0, current_stream(index.device().index)>>>(
      index.data<int64_t>(), n, lo, hi, error_sink(index.device(), code));
  TS_CUDA_CHECK_LAUNCH();
}

// ---- nonzero: the linear positions of the true elements by cub::DeviceSelect::Flagged, one
// synchronization to learn their count (the output's shape), then their coordinates.

__global__ void coords_kernel(const int64_t* lin, int64_t* out, int64_t count, int nd, DimGeom g) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= count) return;
  int64_t rem = lin[k];
  for (int d = nd - 1; d >= 0; --d) {
    out[k * nd + d] = rem % g.sizes[d];
    rem /= g.sizes[d];
  }
}

Tensor nonzero_cuda(const Tensor& mask) {
  const Device d = mask.device();
  const int64_t n = mask.numel(), nd = mask.ndim();
  TS_CHECK(nd <= kMaxDims, NotImplementedError, "nonzero on CUDA: at most ", kMaxDims,
           " dims, got ", nd);
  if (n == 0) return Tensor::empty(Shape{0, nd}, DType::Int64, d);
#if CUB_VERSION >= 300000
  const int64_t items = n;
#else
  TS_CHECK(n <= INT32_MAX, NotImplementedError,
           "nonzero: CUDA masks of 2**31 or more elements need CUB 3");
  const int items = static_cast<int>(n);
#endif
  cudaStream_t s = current_stream(d.index);
  Tensor lin = Tensor::empty(Shape{n}, DType::Int64, d);
  Tensor count = Tensor::empty(Shape{1}, DType::Int64, d);
  const thrust::counting_iterator<int64_t> positions(0);
  size_t temp_bytes = 0;
  TS_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes, positions, mask.data<bool>(),
                                           lin.data<int64_t>(), count.data<int64_t>(), items, s));
  Tensor temp = Tensor::empty(Shape{static_cast<int64_t>(temp_bytes)}, DType::UInt8, d);
  TS_CUDA_CHECK(cub::DeviceSelect::Flagged(temp.data_ptr(), temp_bytes, positions,
                                           mask.data<bool>(), lin.data<int64_t>(),
                                           count.data<int64_t>(), items, s));
  int64_t found = 0;  // the one synchronization: the output's shape depends on it
  cuda_backend()->copy_bytes(&found, Device{}, count.data_ptr(), d, sizeof found, false);
  Tensor out = Tensor::empty(Shape{found, nd}, DType::Int64, d);
  if (found == 0 || nd == 0) return out;
  DimGeom g;
  for (int k = 0; k < nd; ++k) g.sizes[k] = mask.dim(k);
  coords_kernel<<<blocks_for(found), kBlock, 0, s>>>(lin.data<int64_t>(), out.data<int64_t>(),
                                                     found, static_cast<int>(nd), g);
  TS_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace

TS_REGISTER_KERNEL(nonzero_stub, CUDA, &nonzero_cuda);
TS_REGISTER_KERNEL(offset_copy_stub, CUDA, &offset_copy_cuda);
TS_REGISTER_KERNEL(put_add_stub, CUDA, &put_add_cuda);
TS_REGISTER_KERNEL(gather_dim_stub, CUDA, &gather_dim_cuda);
TS_REGISTER_KERNEL(scatter_add_dim_stub, CUDA, &scatter_add_dim_cuda);
TS_REGISTER_KERNEL(index_range_check_stub, CUDA, &index_range_check_cuda);

}  // namespace ts::cuda
