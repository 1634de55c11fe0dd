// CUDA kernels for advanced indexing's element copies and scatter_add (Note [CUDA advanced
// indexing] in ops/indexing_advanced.cpp): positions and their offsets are computed and
// bounds-checked on the host; these kernels receive the offsets and move the elements.
#include <unordered_map>
#include <vector>

#include "core/device_backend.h"
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

// One thread per (position, rest element). off[b] < 0 marks a position to skip (a put whose
// element a later position overwrites: the last write wins, as on the CPU).
template <class E>
__global__ void offset_copy_kernel(E* x, E* y, const int64_t* off, int64_t n, int64_t ybs,
                                   RestGeom r, bool put) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n * r.count) return;
  const int64_t b = t / r.count;
  int64_t rem = t - b * r.count, xo = 0, yo = 0;
  for (int d = r.nd - 1; d >= 0; --d) {
    const int64_t i = rem % r.sizes[d];
    rem /= r.sizes[d];
    xo += i * r.xs[d];
    yo += i * r.ys[d];
  }
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
void launch_offset_copy(const OffsetCopy& c, const std::vector<int64_t>& off, Device d, bool put) {
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
  if (r.count == 0 || c.n == 0) return;
  const Tensor od = upload(off, d);
  const int64_t total = c.n * r.count;
  offset_copy_kernel<E><<<static_cast<unsigned>((total + kBlock - 1) / kBlock), kBlock, 0,
                          current_stream(d.index)>>>(reinterpret_cast<E*>(c.x),
                                                     reinterpret_cast<E*>(c.y), od.data<int64_t>(),
                                                     c.n, c.y_bstride, r, put);
  TS_CUDA_CHECK_LAUNCH();
}

int64_t offset_copy_cuda(const OffsetCopy& c, bool put) {
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
  const Device d{DeviceType::CUDA, static_cast<int16_t>(current_device())};
  switch (c.itemsize) {
    case 1:
      launch_offset_copy<uint8_t>(c, off, d, put);
      break;
    case 2:
      launch_offset_copy<uint16_t>(c, off, d, put);
      break;
    case 4:
      launch_offset_copy<uint32_t>(c, off, d, put);
      break;
    case 8:
      launch_offset_copy<uint64_t>(c, off, d, put);
      break;
    default:
      launch_offset_copy<cf64>(c, off, d, put);
  }
  return -1;
}

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

template <class T>
__global__ void put_add_kernel(T* x, const int64_t* off, const T* y, int64_t n) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (b < n) atomic_add(x + off[b], y[b]);
}

// Note: the sums into one element are atomic, so their order (and a float result's last bits)
// may vary from run to run, as with PyTorch's CUDA index_add/scatter_add.
void put_add_cuda(const Tensor& x, const int64_t* offsets, const Tensor& y) {
  constexpr uint32_t kAtomicSet =
      (kFloatSet | kComplexSet | (1u << int(DType::Int32)) | (1u << int(DType::Int64)) |
       (1u << int(DType::UInt32)) | (1u << int(DType::UInt64)));
  cuda_visit<kAtomicSet>(x.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t n = y.numel();
    if (n == 0) return;
    const Tensor od = upload(std::vector<int64_t>(offsets, offsets + n), x.device());
    put_add_kernel<T><<<static_cast<unsigned>((n + kBlock - 1) / kBlock), kBlock, 0,
                        current_stream(x.device().index)>>>(
        reinterpret_cast<T*>(x.data_ptr()), od.data<int64_t>(),
        reinterpret_cast<const T*>(y.data_ptr()), n);
    TS_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace

TS_REGISTER_KERNEL(offset_copy_stub, CUDA, &offset_copy_cuda);
TS_REGISTER_KERNEL(put_add_stub, CUDA, &put_add_cuda);

}  // namespace ts::cuda
