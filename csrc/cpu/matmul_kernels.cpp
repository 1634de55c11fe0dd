// CPU matmul: float/complex through BLAS gemm, one call per batch entry (or one call for the
// whole batch when it folds into the rows); float16/bfloat16 via float32; integers with a
// cache-friendly i-k-j loop (no BLAS has integer GEMM).
#include "cpu/blas.h"
#include "core/parallel.h"
#include "ops/copy.h"
#include "ops/linalg.h"

namespace ts {
namespace {

// How BLAS can read the last two dims of t: row-major (ld = row stride), transposed, or not.
struct MatLayout {
  bool ok = false, trans = false;
  int64_t ld = 0;
};
MatLayout layout_of(const Tensor& t) {
  const int64_t nd = t.ndim(), rows = t.dim(nd - 2), cols = t.dim(nd - 1);
  const int64_t rs = t.strides()[nd - 2], cs = t.strides()[nd - 1];
  if ((cs == 1 || cols == 1) && rs >= std::max<int64_t>(cols, 1)) return {true, false, rs};
  if ((rs == 1 || rows == 1) && cs >= std::max<int64_t>(rows, 1)) return {true, true, cs};
  return {};
}

// Calls f(offset_out, offset_a, offset_b) (element offsets) for every batch index.
template <class F>
void for_each_batch(const Tensor& out, const Tensor& a, const Tensor& b, const F& f) {
  const int64_t nb = out.ndim() - 2;
  int64_t count = 1;
  for (int64_t d = 0; d < nb; ++d) count *= out.dim(d);
  SmallVec<int64_t, 8> idx(nb, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t oo = 0, oa = 0, ob = 0;
    for (int64_t d = 0; d < nb; ++d) {
      oo += idx[d] * out.strides()[d];
      oa += idx[d] * a.strides()[d];
      ob += idx[d] * b.strides()[d];
    }
    f(oo, oa, ob);
    for (int64_t d = nb - 1; d >= 0; --d) {
      if (++idx[d] < out.dim(d)) break;
      idx[d] = 0;
    }
  }
}

template <class T>
void blas_matmul(const Tensor& out, Tensor a, Tensor b) {
  const int64_t nd = out.ndim(), m = out.dim(nd - 2), n = out.dim(nd - 1), k = a.dim(nd - 1);
  T* o = out.data<T>();
  // Output rows may be strided (a block of a wider matrix: Note [Causal block attention]).
  const int64_t ldc = m == 1 ? std::max<int64_t>(n, 1) : out.strides()[nd - 2];
  if (k == 0) {
    fill_(out, Scalar::from_int(0));
    return;
  }
  MatLayout la = layout_of(a), lb = layout_of(b);
  if (!la.ok) {
    a = contiguous(a);
    la = layout_of(a);
  }
  if (!lb.ok) {
    b = contiguous(b);
    lb = layout_of(b);
  }
  // A contiguous batch of a times one shared b: one gemm with batch*m rows.
  if (nd > 2 && a.is_contiguous() && !la.trans && out.is_contiguous()) {
    bool b_shared = true;
    for (int64_t d = 0; d < nd - 2; ++d)
      b_shared = b_shared && (b.strides()[d] == 0 || b.dim(d) == 1);
    if (b_shared) {
      const int64_t rows = out.numel() / n;
      gemm<T>(false, lb.trans, rows, n, k, a.data<T>(), std::max<int64_t>(la.ld, k), b.data<T>(),
              std::max<int64_t>(lb.ld, 1), o, std::max<int64_t>(n, 1));
      return;
    }
  }
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  for_each_batch(out, a, b, [&](int64_t oo, int64_t oa, int64_t ob) {
    gemm<T>(la.trans, lb.trans, m, n, k, pa + oa, std::max<int64_t>(la.ld, 1), pb + ob,
            std::max<int64_t>(lb.ld, 1), o + oo, ldc);
  });
}

template <class T>
void int_matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t nd = out.ndim(), m = out.dim(nd - 2), n = out.dim(nd - 1), k = a.dim(nd - 1);
  const int64_t as0 = a.strides()[nd - 2], as1 = a.strides()[nd - 1];
  const int64_t bs0 = b.strides()[nd - 2], bs1 = b.strides()[nd - 1];
  const int64_t ldc = out.strides()[nd - 2];
  T* o = out.data<T>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  for_each_batch(out, a, b, [&](int64_t oo, int64_t oa, int64_t ob) {
    parallel_for(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, n * k)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t i = r0; i < r1; ++i) {
                     T* row = o + oo + i * ldc;
                     for (int64_t j = 0; j < n; ++j) row[j] = T(0);
                     for (int64_t p = 0; p < k; ++p) {
                       const T av = pa[oa + i * as0 + p * as1];
                       const T* brow = pb + ob + p * bs0;
                       if (bs1 == 1)
                         for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
                       else
                         for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j * bs1];
                     }
                   }
                 });
  });
}

void cpu_matmul(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t nd = out.ndim();
  TS_CHECK(out.dim(nd - 1) == 1 || out.strides()[nd - 1] == 1, RuntimeError,
           "matmul: internal error: the CPU kernel expects row-major output rows");
  switch (out.dtype()) {
    case DType::Float32:
      return blas_matmul<float>(out, a, b);
    case DType::Float64:
      return blas_matmul<double>(out, a, b);
    case DType::Complex64:
      return blas_matmul<c64>(out, a, b);
    case DType::Complex128:
      return blas_matmul<c128>(out, a, b);
    case DType::Float16:
    case DType::BFloat16: {
      Tensor o32 = Tensor::empty(out.shape(), DType::Float32);
      blas_matmul<float>(o32, astype(a, DType::Float32), astype(b, DType::Float32));
      copy_(out, o32);
      return;
    }
    default:
      visit_dtype<kIntSet>(out.dtype(), "matmul", [&](auto tag) {
        using T = typename decltype(tag)::type;
        int_matmul<T>(out, a, b);
      });
  }
}

}  // namespace

TS_REGISTER_KERNEL(matmul_stub, CPU, &cpu_matmul);

}  // namespace ts
