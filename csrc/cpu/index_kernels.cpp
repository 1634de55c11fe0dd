// CPU kernels of advanced indexing: offset computation, gather/put over raw element bytes (one
// instantiation per item size), put-add (per dtype) and nonzero.
#include <atomic>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "ops/indexing_advanced.h"

namespace ts {
namespace {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(x_elem_offset, y_elem_offset) for every element of the `rest` block (row-major).
template <class F>
void for_each_rest(const OffsetCopy& c, const F& f) {
  const int64_t nd = c.rest.size();
  if (nd == 0) return f(int64_t{0}, int64_t{0});
  for (int64_t d = 0; d < nd; ++d)
    if (c.rest[d] == 0) return;
  const int64_t inner = c.rest[nd - 1], xs = c.x_rest[nd - 1], ys = c.y_rest[nd - 1];
  SmallVec<int64_t, 6> ctr(nd - 1, 0);
  int64_t xo = 0, yo = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(xo + i * xs, yo + i * ys);
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      if (++ctr[d] < c.rest[d]) {
        xo += c.x_rest[d];
        yo += c.y_rest[d];
        break;
      }
      xo -= (c.rest[d] - 1) * c.x_rest[d];
      yo -= (c.rest[d] - 1) * c.y_rest[d];
      ctr[d] = 0;
    }
    if (d < 0) return;
  }
}

// Keeps the smallest failing position seen by any thread.
void record_bad(std::atomic<int64_t>& bad, int64_t b) {
  int64_t cur = bad.load(std::memory_order_relaxed);
  while ((cur < 0 || b < cur) && !bad.compare_exchange_weak(cur, b)) {
  }
}

// Element offset of position b: from the offsets table, or straight from a single index array
// (normalized; range-checked here only when `check`, else validated by the caller).
struct OffsetOf {
  const OffsetCopy& c;
  bool operator()(int64_t b, int64_t& o) const {
    if (!c.index) {
      o = c.offsets[b];
      return true;
    }
    int64_t i = c.index[b];
    if (i < 0) i += c.index_size;
    o = i * c.index_stride;
    return static_cast<uint64_t>(i) < static_cast<uint64_t>(c.index_size);
  }
};

template <class E>
int64_t offset_copy_typed(const OffsetCopy& c, bool put) {
  E* x = reinterpret_cast<E*>(c.x);
  E* y = reinterpret_cast<E*>(c.y);
  const OffsetOf at{c};
  const int64_t ybs = c.y_bstride;
  std::atomic<int64_t> bad{-1};
  if (put) {
    auto put_range = [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        int64_t o;
        at(b, o);
        E* xb = x + o;
        const E* yb = y + b * ybs;
        if (c.rest.empty())
          *xb = *yb;
        else
          for_each_rest(c, [&](int64_t xo, int64_t yo) { xb[xo] = yb[yo]; });
      }
    };
    // Serial, in position order, so the last write to a repeated index wins; positions known
    // to be distinct can be written in parallel.
    if (c.distinct)
      parallel_for(0, c.n, kGrainSize, put_range);
    else
      put_range(0, c.n);
    return -1;
  }
  if (c.index && c.rest.empty()) {  // x[idx]: the hot loop, with everything in registers
    const int64_t* ip = c.index;
    const int64_t size = c.index_size, st = c.index_stride;
    parallel_for(0, c.n, kGrainSize, [&](int64_t lo, int64_t hi) {
      for (int64_t b = lo; b < hi; ++b) {
        const int64_t i = ip[b] < 0 ? ip[b] + size : ip[b];
        if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(size)) {
          record_bad(bad, b);
          return;
        }
        y[b * ybs] = x[i * st];
      }
    });
    return bad.load();
  }
  int64_t rest_n = 1;
  for (int64_t s : c.rest) rest_n *= s;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(rest_n, 1));
  parallel_for(0, c.n, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      int64_t o;
      if (!at(b, o)) {
        record_bad(bad, b);
        return;
      }
      if (c.rest.empty()) {
        y[b * ybs] = x[o];
        continue;
      }
      const E* xb = x + o;
      E* yb = y + b * ybs;
      for_each_rest(c, [&](int64_t xo, int64_t yo) { yb[yo] = xb[xo]; });
    }
  });
  return bad.load();
}

int64_t offset_copy_kernel(const OffsetCopy& c, bool put) {
  switch (c.itemsize) {
    case 1:
      return offset_copy_typed<uint8_t>(c, put);
    case 2:
      return offset_copy_typed<uint16_t>(c, put);
    case 4:
      return offset_copy_typed<uint32_t>(c, put);
    case 8:
      return offset_copy_typed<uint64_t>(c, put);
    default:
      return offset_copy_typed<Bytes16>(c, put);
  }
}

void put_add_kernel(const Tensor& x, const int64_t* offsets, const Tensor& y) {
  visit_dtype<kAllSet>(x.dtype(), "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* xp = x.data<T>();
    const T* yp = y.data<T>();
    const int64_t n = y.numel();
    for (int64_t b = 0; b < n; ++b) {
      T& dst = xp[offsets[b]];
      if constexpr (std::is_same_v<T, bool>)
        dst = dst || yp[b];
      else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        dst = T(static_cast<float>(dst) + static_cast<float>(yp[b]));
      else
        dst = static_cast<T>(dst + yp[b]);
    }
  });
}

int64_t index_offsets_kernel(const Tensor& index, int64_t size, int64_t stride, int64_t* offsets) {
  const int64_t* ip = index.data<int64_t>();
  std::atomic<int64_t> bad{-1};
  parallel_for(0, index.numel(), kGrainSize, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      int64_t i = ip[b];
      if (i < 0) i += size;
      if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(size)) {
        record_bad(bad, b);
        return;
      }
      if (offsets) offsets[b] += i * stride;
    }
  });
  return bad.load();
}

// Calls f(p, element offset into x) for every position p of a contiguous int64 `index` of
// x's rank whose values address axis `dim` (torch.gather's addressing: no negative indices).
// Returns the first position with an index outside [0, size), or -1.
template <class F>
int64_t walk_dim_index(const Tensor& index, int64_t dim, const Tensor& x, const F& f) {
  const int64_t nd = index.ndim(), n = index.numel();
  const int64_t* ip = index.data<int64_t>();
  const int64_t size = x.dim(dim), sdim = x.strides()[dim];
  if (n == 0) return -1;
  // Rows along the last axis: inside a row the base offset moves by a fixed step (0 when the
  // last axis is the indexed one), so the inner loop is a plain strided gather.
  const int64_t len = index.dim(nd - 1), rows = n / len;
  const int64_t step = dim == nd - 1 ? 0 : x.strides()[nd - 1];
  std::atomic<int64_t> bad{-1};
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / len), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t rem = r, base = 0;
      for (int64_t d = nd - 2; d >= 0; --d) {
        const int64_t c = rem % index.dim(d);
        rem /= index.dim(d);
        if (d != dim) base += c * x.strides()[d];
      }
      const int64_t* row = ip + r * len;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t i = row[j];
        if (static_cast<uint64_t>(i) >= static_cast<uint64_t>(size)) {
          record_bad(bad, r * len + j);
          return;
        }
        f(r * len + j, base + j * step + i * sdim);
      }
    }
  });
  return bad.load();
}

int64_t dim_offsets_kernel(const Tensor& index, int64_t dim, const Tensor& x, int64_t* offsets) {
  return walk_dim_index(index, dim, x, [&](int64_t p, int64_t o) { offsets[p] = o; });
}

template <class E>
int64_t gather_dim_typed(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  const E* xp = reinterpret_cast<const E*>(x.data_ptr());
  E* y = reinterpret_cast<E*>(out.data_ptr());
  return walk_dim_index(index, dim, x, [&](int64_t p, int64_t o) { y[p] = xp[o]; });
}

int64_t gather_dim_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  switch (x.itemsize()) {
    case 1:
      return gather_dim_typed<uint8_t>(x, dim, index, out);
    case 2:
      return gather_dim_typed<uint16_t>(x, dim, index, out);
    case 4:
      return gather_dim_typed<uint32_t>(x, dim, index, out);
    case 8:
      return gather_dim_typed<uint64_t>(x, dim, index, out);
    default:
      return gather_dim_typed<Bytes16>(x, dim, index, out);
  }
}

constexpr int64_t kMaskBlock = 1 << 16;

// Prefix counts of true elements per fixed block of a contiguous bool mask (block boundaries
// do not depend on the thread count); start[k] is where block k's selections begin.
std::vector<int64_t> mask_block_starts_kernel(const Tensor& mask) {
  const bool* m = mask.data<bool>();
  const int64_t n = mask.numel();
  const int64_t nblocks = (n + kMaskBlock - 1) / kMaskBlock;
  std::vector<int64_t> start(nblocks + 1, 0);
  parallel_for(0, nblocks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      int64_t cnt = 0;
      const int64_t e = std::min(n, (k + 1) * kMaskBlock);
      for (int64_t i = k * kMaskBlock; i < e; ++i) cnt += m[i];
      start[k + 1] = cnt;
    }
  });
  for (int64_t k = 0; k < nblocks; ++k) start[k + 1] += start[k];
  return start;
}

template <class E>
void mask_copy_typed(const Tensor& x, const Tensor& mask, const std::vector<int64_t>& start,
                     char* yp, int64_t ystride, bool put) {
  E* xv = x.data<E>();
  E* y = reinterpret_cast<E*>(yp);
  const bool* m = mask.data<bool>();
  const int64_t n = mask.numel(), nblocks = start.size() - 1;
  parallel_for(0, nblocks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      const int64_t b = k * kMaskBlock, e = std::min(n, b + kMaskBlock);
      if (put && ystride == 0) {  // x[mask] = scalar
        const E v = y[0];
        for (int64_t i = b; i < e; ++i)
          if (m[i]) xv[i] = v;
        continue;
      }
      E* w = y + start[k] * ystride;
      if (put) {
        for (int64_t i = b; i < e; ++i)
          if (m[i]) {
            xv[i] = *w;
            w += ystride;
          }
      } else {
        for (int64_t i = b; i < e; ++i)
          if (m[i]) *w++ = xv[i];
      }
    }
  });
}

void mask_copy_kernel(const Tensor& x, const Tensor& mask, const std::vector<int64_t>& start,
                      char* y, int64_t ystride, bool put) {
  switch (x.itemsize()) {
    case 1:
      return mask_copy_typed<uint8_t>(x, mask, start, y, ystride, put);
    case 2:
      return mask_copy_typed<uint16_t>(x, mask, start, y, ystride, put);
    case 4:
      return mask_copy_typed<uint32_t>(x, mask, start, y, ystride, put);
    case 8:
      return mask_copy_typed<uint64_t>(x, mask, start, y, ystride, put);
    default:
      return mask_copy_typed<Bytes16>(x, mask, start, y, ystride, put);
  }
}

Tensor nonzero_kernel(const Tensor& mask) {
  const bool* m = mask.data<bool>();
  const int64_t n = mask.numel(), nd = mask.ndim();
  const std::vector<int64_t> start = mask_block_starts_kernel(mask);
  const int64_t nblocks = start.size() - 1;
  constexpr int64_t kBlock = kMaskBlock;
  Tensor out = Tensor::empty({start[nblocks], nd}, DType::Int64);
  int64_t* o = out.data<int64_t>();
  parallel_for(0, nblocks, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      int64_t* w = o + start[k] * nd;
      const int64_t b = k * kBlock, e = std::min(n, b + kBlock);
      if (nd == 1) {
        for (int64_t i = b; i < e; ++i)
          if (m[i]) *w++ = i;
        continue;
      }
      SmallVec<int64_t, 6> c(nd, 0);
      int64_t rem = b;
      for (int64_t d = nd - 1; d >= 0; --d) {
        c[d] = rem % mask.dim(d);
        rem /= mask.dim(d);
      }
      for (int64_t i = b; i < e; ++i) {
        if (m[i]) {
          for (int64_t d = 0; d < nd; ++d) w[d] = c[d];
          w += nd;
        }
        for (int64_t d = nd - 1; d >= 0; --d) {
          if (++c[d] < mask.dim(d)) break;
          c[d] = 0;
        }
      }
    }
  });
  return out;
}

}  // namespace

TS_REGISTER_KERNEL(offset_copy_stub, CPU, &offset_copy_kernel);
TS_REGISTER_KERNEL(put_add_stub, CPU, &put_add_kernel);
TS_REGISTER_KERNEL(index_offsets_stub, CPU, &index_offsets_kernel);
TS_REGISTER_KERNEL(dim_offsets_stub, CPU, &dim_offsets_kernel);
TS_REGISTER_KERNEL(gather_dim_stub, CPU, &gather_dim_kernel);
TS_REGISTER_KERNEL(nonzero_stub, CPU, &nonzero_kernel);
TS_REGISTER_KERNEL(mask_block_starts_stub, CPU, &mask_block_starts_kernel);
TS_REGISTER_KERNEL(mask_copy_stub, CPU, &mask_copy_kernel);

}  // namespace ts
