// CUDA copy/cast and fill kernels (copies within one device; ops/copy.cpp moves bytes across
// devices through the backend).
#include <algorithm>
#include <cstring>

#include "cuda/functors.cuh"
#include "cuda/loops.cuh"
#include "ops/copy.h"
#include "ops/where.h"

namespace ts::cuda {

bool is_host_pointer(const void* p) {
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return attr.type == cudaMemoryTypeUnregistered || attr.type == cudaMemoryTypeHost;
}

namespace {

// Same-dtype copies move bytes: dispatch on the item size only.
template <int N>
struct Bytes {
  alignas(N) unsigned char b[N];
};

// Note [Word copies]: a strided same-dtype copy whose innermost dim is contiguous on both sides
// (heads moved between (B, T, H, D) and (B, H, T, D)) is rewritten to move 16-byte words: the
// inner dim is counted in words, so each thread moves 16 bytes instead of one 2- or 4-byte
// element and the index arithmetic per byte drops by the same factor.
bool widen_to_words(ElementwiseIter& it) {
  constexpr int64_t kWord = 16;
  const int64_t isz = it.elsize[0];
  if (it.shape.size() < 2 || isz >= kWord || (it.shape[0] * isz) % kWord != 0) return false;
  for (int k = 0; k < 2; ++k) {
    if (it.strides[k][0] != isz || reinterpret_cast<uintptr_t>(it.base[k]) % kWord != 0)
      return false;
    for (size_t d = 1; d < it.shape.size(); ++d)
      if (it.strides[k][d] % kWord != 0) return false;
  }
  it.numel = it.numel / it.shape[0] * (it.shape[0] * isz / kWord);
  it.shape[0] = it.shape[0] * isz / kWord;
  for (int k = 0; k < 2; ++k) {
    it.strides[k][0] = kWord;
    it.elsize[k] = kWord;
  }
  return true;
}

void copy_cuda(const ElementwiseIter& it0, DType dst, DType src) {
  ElementwiseIter words = it0;
  const bool wide = dst == src && widen_to_words(words);
  const ElementwiseIter& it = wide ? words : it0;
  if (dst == src) {
    switch (wide ? 16 : itemsize(dst)) {
      case 1:
        return launch_elementwise<uint8_t, uint8_t, 2>(it, fn::Identity{});
      case 2:
        return launch_elementwise<uint16_t, uint16_t, 2>(it, fn::Identity{});
      case 4:
        return launch_elementwise<uint32_t, uint32_t, 2>(it, fn::Identity{});
      case 8:
        return launch_elementwise<uint64_t, uint64_t, 2>(it, fn::Identity{});
      default:
        return launch_elementwise<cf64, cf64, 2>(it, fn::Identity{});
    }
  }
  cuda_visit<kAllSet>(dst, "astype", [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    cuda_visit<kAllSet>(src, "astype", [&](auto stag) {
      using S = typename decltype(stag)::type;
      launch_elementwise<D, S, 2>(it, fn::Identity{});
    });
  });
}

// Each thread stores one 16-byte word holding the value's bytes repeated; the unaligned head
// and the tail (fewer than one word each) are stored element by element by the first threads.
template <class T>
__global__ void fill_contig_kernel(T* p, int64_t head, int64_t words, int64_t n, T v, uint4 word) {
  constexpr int64_t kPer = sizeof(uint4) / sizeof(T);
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < words) reinterpret_cast<uint4*>(p + head)[i] = word;
  const int64_t tail = head + words * kPer;
  if (i < head) p[i] = v;
  if (i < n - tail) p[tail + i] = v;
}

template <class T>
void fill_contig(T* p, int64_t n, T v, cudaStream_t s) {
  constexpr int64_t kPer = sizeof(uint4) / sizeof(T);
  // Elements before the first word boundary; when the boundary falls inside an element (a view
  // at an odd offset) no element starts on one, and all are stored singly.
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % sizeof(uint4));
  int64_t head = n;
  if (mis % static_cast<int64_t>(sizeof(T)) == 0)
    head = std::min<int64_t>(n, (static_cast<int64_t>(sizeof(uint4)) - mis) % 16 / sizeof(T));
  const int64_t words = (n - head) / kPer;
  uint4 word;
  for (int64_t k = 0; k < kPer; ++k)
    memcpy(reinterpret_cast<char*>(&word) + k * sizeof(T), &v, sizeof(T));
  const int64_t threads = std::max({words, head, n - head - words * kPer, int64_t{1}});
  fill_contig_kernel<T>
      <<<static_cast<unsigned>((threads + 255) / 256), 256, 0, s>>>(p, head, words, n, v, word);
  TS_CUDA_CHECK_LAUNCH();
}

template <class T>
struct Const {
  T v;
  template <class A>
  __host__ __device__ __forceinline__ T operator()(A) const {
    return v;
  }
};

// Fills with the bytes of one element, as the unsigned type of its size.
template <class U>
void fill_bits(const Tensor& dst, const void* bits) {
  U v;
  memcpy(&v, bits, sizeof(U));
  cudaStream_t s = current_stream(dst.device().index);
  if (dst.is_contiguous()) {
    fill_contig<U>(dst.data<U>(), dst.numel(), v, s);
    return;
  }
  auto it = ElementwiseIter::make(dst, {&dst}, "fill");
  launch_elementwise<U, U, 2>(it, Const<U>{v});
}

void fill_cuda(const Tensor& dst, const Scalar& value) {
  // The value is converted on the host by the CPU's rules; its bytes are then written.
  visit_dtype<kAllSet>(dst.dtype(), "fill", [&](auto tag) {
    using H = typename decltype(tag)::type;
    const H hv = value.to<H>();
    if constexpr (sizeof(H) == 1)
      fill_bits<uint8_t>(dst, &hv);
    else if constexpr (sizeof(H) == 2)
      fill_bits<uint16_t>(dst, &hv);
    else if constexpr (sizeof(H) == 4)
      fill_bits<uint32_t>(dst, &hv);
    else if constexpr (sizeof(H) == 8)
      fill_bits<uint64_t>(dst, &hv);
    else
      fill_bits<cf64>(dst, &hv);
  });
}

// where(cond, a, b): a select over element bytes (one instantiation per item size).
template <class E, class Index>
__global__ void __launch_bounds__(kBlock) where_kernel(ElemArgs<4> a) {
  const Index i = static_cast<Index>(blockIdx.x) * kBlock + threadIdx.x;
  if (static_cast<int64_t>(i) >= a.numel) return;
  int64_t off[4];
  elem_offsets<4, Index>(a, i, off);
  const bool c = load_operand<bool>(a, 1, off[1]);
  *reinterpret_cast<E*>(a.base[0] + off[0]) =
      c ? load_operand<E>(a, 2, off[2]) : load_operand<E>(a, 3, off[3]);
}

template <class E>
void launch_where(const ElementwiseIter& it) {
  unsigned scalar_mask;
  bool contig;
  // Host operands travel by value: their first sizeof(E) bytes (a 0-d tensor's storage holds
  // at least that many).
  ElemArgs<4> a = make_args<4>(it, sizeof(E), scalar_mask, contig);
  const unsigned grid = static_cast<unsigned>((a.numel + kBlock - 1) / kBlock);
  cudaStream_t s = current_stream(current_device());
  if (a.numel <= INT32_MAX)
    where_kernel<E, uint32_t><<<grid, kBlock, 0, s>>>(a);
  else
    where_kernel<E, int64_t><<<grid, kBlock, 0, s>>>(a);
  TS_CUDA_CHECK_LAUNCH();
}

void where_cuda(const ElementwiseIter& it, int64_t itemsize) {
  if (it.numel == 0) return;
  switch (itemsize) {
    case 1:
      return launch_where<uint8_t>(it);
    case 2:
      return launch_where<uint16_t>(it);
    case 4:
      return launch_where<uint32_t>(it);
    case 8:
      return launch_where<uint64_t>(it);
    default:
      return launch_where<cf64>(it);
  }
}

}  // namespace

TS_REGISTER_KERNEL(where_stub, CUDA, &where_cuda);
TS_REGISTER_KERNEL(copy_stub, CUDA, &copy_cuda);
TS_REGISTER_KERNEL(fill_stub, CUDA, &fill_cuda);

}  // namespace ts::cuda
