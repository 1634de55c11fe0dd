// CPU sort kernels. Note [Sort keys]: every real dtype maps to an unsigned key of its width
// whose unsigned order is the sort order (sign bit flipped for ints; for floats negative
// values bit-inverted, NaN mapped to the largest key), so one LSD radix sort over 8-bit
// digits serves all dtypes, is stable, and descending is the same sort on inverted keys.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "core/parallel.h"
#include "ops/sort.h"

namespace ts {
namespace {

template <class T>
using KeyT =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 2, uint16_t,
                                          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <class T>
constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Zero test in the value's own precision: a float64 like 1e-100 is not zero (a float32 cast
// would flush it and sort it among the zeros).
template <class T>
bool is_float_zero(T v) {
  if constexpr (std::is_same_v<T, double>)
    return v == 0.0;
  else
    return static_cast<float>(v) == 0.0f;
}

template <class T>
KeyT<T> to_key(T v) {
  using U = KeyT<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<U>(v);
  } else if constexpr (std::is_unsigned_v<T>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<U>(v) ^ sign;
  } else {
    bool nan;
    if constexpr (std::is_same_v<T, double>)
      nan = std::isnan(v);
    else
      nan = std::isnan(static_cast<float>(v));
    if (nan) return static_cast<U>(~U(0));
    if (is_float_zero(v)) return sign;  // -0.0 == 0.0: equal keys (stable order)
    U u;
    std::memcpy(&u, &v, sizeof(T));
    return (u & sign) ? static_cast<U>(~u) : static_cast<U>(u | sign);
  }
}

template <class T>
T from_key(KeyT<T> k) {
  using U = KeyT<T>;
  constexpr U sign = U(1) << (8 * sizeof(T) - 1);
  if constexpr (std::is_same_v<T, bool>) {
    return k != 0;
  } else if constexpr (std::is_unsigned_v<T>) {
    return k;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(k ^ sign);
  } else {
    const U u = (k & sign) ? static_cast<U>(k ^ sign) : static_cast<U>(~k);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      return T::from_bits(u);
    } else {
      T v;
      std::memcpy(&v, &u, sizeof(T));
      return v;
    }
  }
}

// Stable LSD radix sort of keys k (and payload id when non-null), using kb/ib as scratch.
// Returns true when the result ended up in the scratch buffers.
template <class U>
bool radix_sort(U* k, U* kb, uint32_t* id, uint32_t* ib, int64_t n) {
  constexpr int P = sizeof(U);
  std::vector<std::array<int64_t, 256>> h(P);
  for (auto& a : h) a.fill(0);
  for (int64_t j = 0; j < n; ++j) {
    const U v = k[j];
    for (int p = 0; p < P; ++p) ++h[p][(v >> (8 * p)) & 255];
  }
  bool swapped = false;
  for (int p = 0; p < P; ++p) {
    auto& hp = h[p];
    if (hp[(k[0] >> (8 * p)) & 255] == n) continue;  // every key shares this digit
    int64_t sum = 0;
    for (auto& c : hp) {
      const int64_t t = c;
      c = sum;
      sum += t;
    }
    const int shift = 8 * p;
    if (id) {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t pos = hp[(k[j] >> shift) & 255]++;
        kb[pos] = k[j];
        ib[pos] = id[j];
      }
      std::swap(id, ib);
    } else {
      for (int64_t j = 0; j < n; ++j) kb[hp[(k[j] >> shift) & 255]++] = k[j];
    }
    std::swap(k, kb);
    swapped = !swapped;
  }
  return swapped;
}

// Insertion sort for short rows (stable).
template <class U>
void insertion_sort(U* k, uint32_t* id, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    const U v = k[i];
    const uint32_t w = id ? id[i] : 0;
    int64_t j = i;
    for (; j > 0 && k[j - 1] > v; --j) {
      k[j] = k[j - 1];
      if (id) id[j] = id[j - 1];
    }
    k[j] = v;
    if (id) id[j] = w;
  }
}

// Element offset of row r of a tensor whose last axis is the sorted one.
int64_t row_offset(const Tensor& t, int64_t r) {
  int64_t off = 0;
  for (int64_t d = t.ndim() - 2; d >= 0; --d) {
    off += (r % t.dim(d)) * t.strides()[d];
    r /= t.dim(d);
  }
  return off;
}

template <class T>
void sort_rows(const Tensor& x, const Tensor* values, const Tensor* indices, bool descending) {
  using U = KeyT<T>;
  const int64_t n = x.ndim() ? x.dim(x.ndim() - 1) : 1;
  if (n == 0 || x.numel() == 0) return;
  const int64_t rows = x.numel() / n;
  const int64_t xs = x.ndim() ? x.strides()[x.ndim() - 1] : 1;
  const U flip = descending ? static_cast<U>(~U(0)) : U(0);
  const T* xp = x.data<T>();
  const int64_t grain = std::max<int64_t>(1, 65536 / n);
  parallel_for(0, rows, grain, [&](int64_t lo, int64_t hi) {
    std::vector<U> k(n), kb(n);
    std::vector<uint32_t> id(indices ? n : 0), ib(indices ? n : 0);
    std::vector<T> zeros;  // the zeros of the row in order: their signs survive the sort
    for (int64_t r = lo; r < hi; ++r) {
      const T* src = xp + row_offset(x, r);
      for (int64_t j = 0; j < n; ++j) k[j] = static_cast<U>(to_key(src[j * xs]) ^ flip);
      if constexpr (is_float_v<T>) {
        zeros.clear();
        if (values)
          for (int64_t j = 0; j < n; ++j)
            if (is_float_zero(src[j * xs])) zeros.push_back(src[j * xs]);
      }
      U* ks = k.data();
      uint32_t* is = indices ? id.data() : nullptr;
      if (is)
        for (int64_t j = 0; j < n; ++j) is[j] = static_cast<uint32_t>(j);
      if (n <= 32) {
        insertion_sort(ks, is, n);
      } else if (radix_sort(ks, kb.data(), is, ib.data(), n)) {
        ks = kb.data();
        if (is) is = ib.data();
      }
      if (values) {
        const int64_t vs = values->strides()[values->ndim() - 1];
        T* dst = values->data<T>() + row_offset(*values, r);
        for (int64_t j = 0; j < n; ++j) dst[j * vs] = from_key<T>(static_cast<U>(ks[j] ^ flip));
        if constexpr (is_float_v<T>) {
          // Equal keys stay in input order, so the zeros come out in the order they went in.
          constexpr U zero_key = U(1) << (8 * sizeof(T) - 1);
          size_t z = 0;
          for (int64_t j = 0; j < n && z < zeros.size(); ++j)
            if (static_cast<U>(ks[j] ^ flip) == zero_key) dst[j * vs] = zeros[z++];
        }
      }
      if (indices) {
        const int64_t is_ = indices->strides()[indices->ndim() - 1];
        int64_t* dst = indices->data<int64_t>() + row_offset(*indices, r);
        for (int64_t j = 0; j < n; ++j) dst[j * is_] = is[j];
      }
    }
  });
}

constexpr uint32_t kSortSet = kRealSet | kBoolSet;

// The first k of each row in sort order (ties by index, so the result equals the stable
// sort's prefix): selection over (key, index) pairs, O(n + k log k) per row. Outputs have k
// along their last axis.
template <class T>
void topk_rows(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t k,
               bool descending) {
  using U = KeyT<T>;
  const int64_t nd = x.ndim(), n = x.dim(nd - 1);
  if (k == 0 || x.numel() == 0) return;
  const int64_t rows = x.numel() / n, xs = x.strides()[nd - 1];
  const int64_t vs = values.strides()[nd - 1], is = indices.strides()[nd - 1];
  const U flip = descending ? static_cast<U>(~U(0)) : U(0);
  const T* xp = x.data<T>();
  parallel_for(0, rows, std::max<int64_t>(1, 65536 / n), [&](int64_t lo, int64_t hi) {
    std::vector<std::pair<U, int64_t>> kv(k * 16 <= n ? k : n);
    for (int64_t r = lo; r < hi; ++r) {
      const T* src = xp + row_offset(x, r);
      if (k * 16 <= n) {
        // Small k: a max-heap of the k best so far; most elements lose one comparison to its
        // top. Scanning in index order keeps ties by index (a later equal key never wins).
        auto heap_end = kv.begin() + k;
        for (int64_t j = 0; j < k; ++j) kv[j] = {static_cast<U>(to_key(src[j * xs]) ^ flip), j};
        std::make_heap(kv.begin(), heap_end);
        for (int64_t j = k; j < n; ++j) {
          const U key = static_cast<U>(to_key(src[j * xs]) ^ flip);
          if (key >= kv[0].first) continue;
          std::pop_heap(kv.begin(), heap_end);
          kv[k - 1] = {key, j};
          std::push_heap(kv.begin(), heap_end);
        }
      } else {
        for (int64_t j = 0; j < n; ++j) kv[j] = {static_cast<U>(to_key(src[j * xs]) ^ flip), j};
        if (k < n) std::nth_element(kv.begin(), kv.begin() + k, kv.end());
      }
      std::sort(kv.begin(), kv.begin() + k);
      T* vd = values.data<T>() + row_offset(values, r);
      int64_t* id = indices.data<int64_t>() + row_offset(indices, r);
      for (int64_t j = 0; j < k; ++j) {
        vd[j * vs] = src[kv[j].second * xs];
        id[j * is] = kv[j].second;
      }
    }
  });
}

void topk_kernel(const Tensor& x, const Tensor& values, const Tensor& indices, int64_t k,
                 bool largest) {
  visit_dtype<kSortSet>(x.dtype(), "topk", [&](auto tag) {
    topk_rows<typename decltype(tag)::type>(x, values, indices, k, largest);
  });
}

void sort_kernel(const Tensor& x, const Tensor* values, const Tensor* indices, bool descending) {
  visit_dtype<kSortSet>(x.dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    sort_rows<T>(x, values, indices, descending);
  });
}

void searchsorted_kernel(const Tensor& sorted, const Tensor& v, const Tensor& out, bool right) {
  visit_dtype<kSortSet>(sorted.dtype(), "searchsorted", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = KeyT<T>;
    const int64_t n = sorted.numel();
    std::vector<U> keys(n);
    const T* sp = sorted.data<T>();
    for (int64_t j = 0; j < n; ++j) keys[j] = to_key(sp[j]);
    const T* vp = v.data<T>();
    int64_t* o = out.data<int64_t>();
    parallel_for(0, v.numel(), 4096, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        const U key = to_key(vp[i]);
        const auto it = right ? std::upper_bound(keys.begin(), keys.end(), key)
                              : std::lower_bound(keys.begin(), keys.end(), key);
        o[i] = it - keys.begin();
      }
    });
  });
}

}  // namespace

TS_REGISTER_KERNEL(sort_stub, CPU, &sort_kernel);
TS_REGISTER_KERNEL(searchsorted_stub, CPU, &searchsorted_kernel);
TS_REGISTER_KERNEL(topk_stub, CPU, &topk_kernel);

}  // namespace ts
