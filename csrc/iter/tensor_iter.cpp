#include "iter/tensor_iter.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define TS_X86_WIDE 1
#endif

// GCC 12's AVX-512 headers seed the unpack/shuffle intrinsics with a self-initialized
// _mm512_undefined_ps(), which -Wmaybe-uninitialized reports at every inlined use.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace ts {

namespace {

// Rows i_begin..n, in 16 x 16 blocks so that both the reads (along the source's rows) and the
// writes (along the buffer's rows) stay within a few cache lines at a time.
template <int64_t ES>
void transpose_scalar(const char* src, int64_t s0, int64_t s1, int64_t n, int64_t m, char* dst,
                      int64_t pitch, int64_t i_begin) {
  constexpr int64_t kB = 16;
  for (int64_t ib = i_begin; ib < n; ib += kB)
    for (int64_t jb = 0; jb < m; jb += kB) {
      const int64_t ie = std::min(n, ib + kB), je = std::min(m, jb + kB);
      for (int64_t i = ib; i < ie; ++i)
        for (int64_t j = jb; j < je; ++j)
          std::memcpy(dst + (j * pitch + i) * ES, src + i * s0 + j * s1, ES);
    }
}

template <int64_t ES>
void transpose_generic(const char* src, int64_t s0, int64_t s1, int64_t n, int64_t m, char* dst,
                       int64_t pitch) {
  transpose_scalar<ES>(src, s0, s1, n, m, dst, pitch, 0);
}

#if defined(__SSE2__)
// 4-byte elements, input rows contiguous: 4x4 blocks through SSE2 shuffles.
void transpose_4(const char* src, int64_t s0, int64_t n, int64_t m, char* dst, int64_t pitch) {
  float* d = reinterpret_cast<float*>(dst);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float* r = reinterpret_cast<const float*>(src + i * s0);
    const float* r1 = reinterpret_cast<const float*>(src + (i + 1) * s0);
    const float* r2 = reinterpret_cast<const float*>(src + (i + 2) * s0);
    const float* r3 = reinterpret_cast<const float*>(src + (i + 3) * s0);
    int64_t j = 0;
    for (; j + 4 <= m; j += 4) {
      __m128 a = _mm_loadu_ps(r + j), b = _mm_loadu_ps(r1 + j);
      __m128 c = _mm_loadu_ps(r2 + j), e = _mm_loadu_ps(r3 + j);
      _MM_TRANSPOSE4_PS(a, b, c, e);
      _mm_storeu_ps(d + j * pitch + i, a);
      _mm_storeu_ps(d + (j + 1) * pitch + i, b);
      _mm_storeu_ps(d + (j + 2) * pitch + i, c);
      _mm_storeu_ps(d + (j + 3) * pitch + i, e);
    }
    for (; j < m; ++j) {
      d[j * pitch + i] = r[j];
      d[j * pitch + i + 1] = r1[j];
      d[j * pitch + i + 2] = r2[j];
      d[j * pitch + i + 3] = r3[j];
    }
  }
  transpose_scalar<4>(src, s0, 4, n, m, dst, pitch, i);
}

// 8-byte elements, input rows contiguous: 2x2 blocks.
void transpose_8(const char* src, int64_t s0, int64_t n, int64_t m, char* dst, int64_t pitch) {
  double* d = reinterpret_cast<double*>(dst);
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    const double* r = reinterpret_cast<const double*>(src + i * s0);
    const double* r1 = reinterpret_cast<const double*>(src + (i + 1) * s0);
    int64_t j = 0;
    for (; j + 2 <= m; j += 2) {
      const __m128d a = _mm_loadu_pd(r + j), b = _mm_loadu_pd(r1 + j);
      _mm_storeu_pd(d + j * pitch + i, _mm_unpacklo_pd(a, b));
      _mm_storeu_pd(d + (j + 1) * pitch + i, _mm_unpackhi_pd(a, b));
    }
    for (; j < m; ++j) {
      d[j * pitch + i] = r[j];
      d[j * pitch + i + 1] = r1[j];
    }
  }
  transpose_scalar<8>(src, s0, 8, n, m, dst, pitch, i);
}
#endif

#if defined(TS_X86_WIDE)
// 4-byte elements, input rows contiguous, 16 x 16 blocks transposed in AVX-512 registers (the
// build targets baseline x86-64: this is compiled for AVX-512 and picked at run time). Edges
// that are not a whole block take the 4 x 4 SSE path. `stream`: whole 64-byte rows of a block
// go around the caches (Note [Streaming tile stores]), when dst and pitch keep them aligned.
// `next`: the tile the caller does next, whose rows are prefetched in step with this one's
// (Note [Next tile prefetch]).
__attribute__((target("avx512f"))) void transpose_4_avx512(const char* src, int64_t s0, int64_t n,
                                                           int64_t m, char* dst, int64_t pitch,
                                                           bool stream, const TileRows* next) {
  float* d = reinterpret_cast<float*>(dst);
  const int64_t n16 = n & ~int64_t(15), m16 = m & ~int64_t(15);
  stream = stream && reinterpret_cast<uintptr_t>(dst) % 64 == 0 && pitch % 16 == 0;
  for (int64_t i = 0; i < n16; i += 16) {
    if (next != nullptr) next->prefetch(i * next->rows / n16, (i + 16) * next->rows / n16);
    for (int64_t j = 0; j < m16; j += 16) {
      __m512 r[16], t[16];
      for (int k = 0; k < 16; ++k)
        r[k] = _mm512_loadu_ps(reinterpret_cast<const float*>(src + (i + k) * s0) + j);
      // 2x2 blocks of elements, then 4x4, then 8x8 lanes of 128 bits, then 16x16.
      for (int k = 0; k < 16; k += 2) {
        t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
      }
      for (int k = 0; k < 16; k += 4) {
        r[k] = _mm512_shuffle_ps(t[k], t[k + 2], 0x44);
        r[k + 1] = _mm512_shuffle_ps(t[k], t[k + 2], 0xEE);
        r[k + 2] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        r[k + 3] = _mm512_shuffle_ps(t[k + 1], t[k + 3], 0xEE);
      }
      for (int k = 0; k < 8; ++k) {
        const int a = (k / 4) * 8 + (k % 4);
        t[a] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0x88);
        t[a + 4] = _mm512_shuffle_f32x4(r[a], r[a + 4], 0xDD);
      }
      for (int k = 0; k < 8; ++k) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0x88);
        r[k + 8] = _mm512_shuffle_f32x4(t[k], t[k + 8], 0xDD);
      }
      if (stream)
        for (int k = 0; k < 16; ++k) _mm512_stream_ps(d + (j + k) * pitch + i, r[k]);
      else
        for (int k = 0; k < 16; ++k) _mm512_storeu_ps(d + (j + k) * pitch + i, r[k]);
    }
  }
  // Right edge (columns m16..m) of the whole-block rows, then the bottom rows n16..n.
  for (int64_t i = 0; i < n16; ++i)
    for (int64_t j = m16; j < m; ++j)
      d[j * pitch + i] = reinterpret_cast<const float*>(src + i * s0)[j];
  transpose_scalar<4>(src, s0, 4, n, m, dst, pitch, n16);
}

bool has_avx512() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}
#endif

}  // namespace

// Bytes are moved as-is (floats through integer-free SSE moves keep every bit, NaN payloads
// included).
void transpose_tile(const char* src, int64_t s0, int64_t s1, int64_t n, int64_t m, int64_t es,
                    char* dst, int64_t pitch, bool stream, const TileRows* next) {
#if defined(TS_X86_WIDE)
  if (es == 4 && s1 == 4 && n >= 16 && m >= 16 && has_avx512())
    return transpose_4_avx512(src, s0, n, m, dst, pitch, stream, next);
#endif
#if defined(__SSE2__)
  if (es == 4 && s1 == 4) return transpose_4(src, s0, n, m, dst, pitch);
  if (es == 8 && s1 == 8) return transpose_8(src, s0, n, m, dst, pitch);
#endif
  switch (es) {
    case 1:
      return transpose_generic<1>(src, s0, s1, n, m, dst, pitch);
    case 2:
      return transpose_generic<2>(src, s0, s1, n, m, dst, pitch);
    case 4:
      return transpose_generic<4>(src, s0, s1, n, m, dst, pitch);
    case 8:
      return transpose_generic<8>(src, s0, s1, n, m, dst, pitch);
    default:
      return transpose_generic<16>(src, s0, s1, n, m, dst, pitch);
  }
}

void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void ElementwiseIter::transpose_copy(int64_t grain) const {
  const TileGrid g = tile_grid();
  const int64_t planes = numel / (shape[0] * shape[1]), es = elsize[0];
  const int64_t pitch = strides[0][1] / es;
  const bool streaming = numel * es >= kStreamBytes;
  parallel_for(0, planes * g.c0 * g.c1, std::max<int64_t>(1, grain / (g.tile0 * g.tile1)),
               [&](int64_t b, int64_t e) {
                 TileAt next = tile_at(g, b);
                 for (int64_t t = b; t < e; ++t) {
                   const TileAt cur = next;
                   const bool more = t + 1 < e;
                   if (more) next = tile_at(g, t + 1);
                   const TileRows rows{next.q[1], strides[1][0], next.n, next.m * es};
                   transpose_tile(cur.q[1], strides[1][0], strides[1][1], cur.n, cur.m, es,
                                  cur.q[0], pitch, streaming, more ? &rows : nullptr);
                 }
                 if (streaming) store_fence();
               });
}

bool is_packed(const Shape& shape, const Strides& strides) {
  SmallVec<std::pair<int64_t, int64_t>, 8> dims;  // (stride, size) of the dims of size > 1
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (shape[d] > 1) dims.push_back({strides[d], shape[d]});
  std::sort(dims.begin(), dims.end());
  int64_t expect = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expect) return false;
    expect *= size;
  }
  return true;
}

namespace {

// PyTorch's is_contiguous(memory_format=channels_last): a 4-D tensor whose dims of size != 1
// have the row-major strides of its (N, H, W, C) order.
bool channels_last_2d(const Tensor& t) {
  if (t.ndim() != 4) return false;
  int64_t expect = 1;
  for (const int d : {1, 3, 2, 0}) {
    if (t.dim(d) == 1) continue;
    if (t.strides()[d] != expect) return false;
    expect *= t.dim(d);
  }
  return true;
}

// TensorIterator's fast setup (Note [Output strides]): `done` false when it does not apply.
Strides fast_setup_strides(const Shape& shape, std::initializer_list<const Tensor*> inputs,
                           bool& done) {
  done = false;
  bool contiguous = true, channels_last = true, dense = true;
  for (const Tensor* t : inputs) {
    if (t->shape() != shape) return {};
    contiguous = contiguous && t->is_contiguous();
    channels_last = channels_last && channels_last_2d(*t);
    dense = dense && is_packed(t->shape(), t->strides());
  }
  done = true;
  if (contiguous) return {};
  if (channels_last) {
    Strides st(4);
    st[1] = 1;
    st[3] = shape[1];
    st[2] = st[3] * shape[3];
    st[0] = st[2] * shape[2];
    return st;
  }
  const Tensor* last = nullptr;
  for (const Tensor* t : inputs) {
    if (dense && last && t->strides() != last->strides()) dense = false;
    last = t;
  }
  if (dense) return last->strides();
  done = false;
  return {};
}

}  // namespace

Strides output_strides(const Shape& shape, std::initializer_list<const Tensor*> inputs) {
  bool done;
  Strides fast = fast_setup_strides(shape, inputs, done);
  if (done) return fast;
  const int64_t nd = shape.size();
  if (nd <= 1) return {};
  // Each input's |strides| aligned to the output's dims, 0 where it broadcasts.
  Strides st[kMaxOperands];
  int n = 0;
  for (const Tensor* t : inputs) {
    TS_CHECK(n < kMaxOperands, RuntimeError, "elementwise: too many operands");
    Strides& s = st[n++];
    s.resize(nd, 0);
    const int64_t lead = nd - t->ndim();
    for (int64_t d = 0; d < t->ndim(); ++d)
      if (!(t->dim(d) == 1 && shape[lead + d] != 1)) s[lead + d] = std::llabs(t->strides()[d]);
  }
  // 1: d0 goes outside d1; -1: inside; 0: no input has a say.
  const auto should_swap = [&](int64_t d0, int64_t d1) {
    for (int k = 0; k < n; ++k) {
      const Strides& s = st[k];
      if (s[d0] == 0 || s[d1] == 0) continue;
      if (s[d0] != s[d1]) return s[d0] < s[d1] ? -1 : 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  SmallVec<int64_t, 8> perm(nd);  // innermost first
  for (int64_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  sort_dims(perm, should_swap);
  bool row_major = true;
  for (int64_t i = 0; i < nd; ++i) row_major = row_major && perm[i] == nd - 1 - i;
  if (row_major) return {};
  Strides out(nd);
  int64_t next = 1;
  for (int64_t i = 0; i < nd; ++i) {
    out[perm[i]] = next;
    next *= shape[perm[i]];
  }
  return out;
}

ElementwiseIter ElementwiseIter::make(const Tensor& out,
                                      std::initializer_list<const Tensor*> inputs, const char* op) {
  ElementwiseIter it;
  it.nops = 1 + static_cast<int>(inputs.size());
  TS_CHECK(it.nops <= kMaxOperands, RuntimeError, op, ": too many operands");
  TS_CHECK(out.ndim() <= 64, ValueError, op, ": at most 64 dimensions are supported");
  const Shape& oshape = out.shape();
  const int64_t nd = oshape.size();
  it.numel = out.numel();

  // Byte strides of every operand, aligned to the output's dims.
  Strides full[kMaxOperands];
  const Tensor* ops[kMaxOperands];
  ops[0] = &out;
  int k = 1;
  for (const Tensor* t : inputs) ops[k++] = t;
  for (k = 0; k < it.nops; ++k) {
    const Tensor& t = *ops[k];
    it.base[k] = t.data_ptr();
    it.elsize[k] = t.itemsize();
    full[k].resize(nd, 0);
    const int64_t lead = nd - t.ndim();
    TS_CHECK(lead >= 0, ValueError, op, ": operand of shape ", shape_str(t.shape()),
             " does not broadcast to ", shape_str(oshape));
    for (int64_t d = 0; d < t.ndim(); ++d) {
      const int64_t s = t.dim(d);
      if (s == oshape[lead + d]) {
        full[k][lead + d] = s == 1 ? 0 : t.strides()[d] * t.itemsize();
      } else if (s == 1) {
        full[k][lead + d] = 0;
      } else {
        throw ValueError(str(op, ": operand of shape ", shape_str(t.shape()),
                             " does not broadcast to ", shape_str(oshape)));
      }
    }
  }

  // Innermost-first order of the non-trivial dims, sorted by the output's |stride| (or the
  // first input's, where the output is broadcast) so the output is written in memory order.
  SmallVec<int64_t, 8> order;
  for (int64_t d = nd - 1; d >= 0; --d)
    if (oshape[d] != 1) order.push_back(d);
  auto key = [&](int64_t d) {
    for (int q = 0; q < it.nops; ++q)
      if (full[q][d] != 0) return static_cast<int64_t>(std::llabs(full[q][d]));
    return int64_t(0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return key(a) < key(b); });

  // Coalesce adjacent dims that every operand walks as one.
  for (int64_t i = 0; i < order.size(); ++i) {
    const int64_t d = order[i];
    if (!it.shape.empty()) {
      bool merge = true;
      const int64_t last = it.shape.size() - 1;
      for (int q = 0; q < it.nops && merge; ++q)
        merge = it.strides[q][last] * it.shape[last] == full[q][d];
      if (merge) {
        it.shape[last] *= oshape[d];
        continue;
      }
    }
    it.shape.push_back(oshape[d]);
    for (int q = 0; q < it.nops; ++q) it.strides[q].push_back(full[q][d]);
  }
  return it;
}

}  // namespace ts
